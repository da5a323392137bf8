// How the operator's Node runtime is started: by its image's entrypoint
// (scripts/images) and by every test and benchmark that runs it
// (test/support/operator.ts), so that what is measured is what is deployed.
//
// --max-semi-space-size=16: Node 24's V8 lets the young generation grow to two
// 64 MB semi-spaces under a burst of short-lived allocation (a cold start: every
// cluster listed, thousands of objects computed and compared), and the pages
// stay resident after the burst. The operator's garbage is short-lived (a
// reconcile's desired objects, a response's JSON); 16 MB semi-spaces collect it
// as well with more, smaller scavenges (bench/scale.ts, issue 21).
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
