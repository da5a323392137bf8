// How the dns-server's Node runtime is started: by its image's entrypoint
// (main.ts here) and by every test, benchmark and demo that runs it
// (test/support/dns.ts, bench/dns-load.ts), so that what is measured is what
// is deployed. Here, not in dns-server/, because the dns-server's own tests
// import test/support and test/support must not import the dns-server back.
//
// --max-semi-space-size=16: with health checks the prober makes hundreds of
// short-lived requests a second (1,000 targets every 2 s), and Node 24's V8 lets
// the young generation grow to two 64 MB semi-spaces under that allocation
// rate, resident from then on: 247-253 MB against 102-107 MB without checks.
// 16 MB semi-spaces collect the same garbage in smaller scavenges: 180-181 MB
// (bench/README.md, "Traffic policy"). The answering path allocates little
// (answers are encoded when the records change), so its rate is unchanged.
//
// --expose-gc: the build thread collects its garbage once after a build whose heap
// has grown past what a kept thread may hold, and is kept if what is live fits
// (dns-server/build/worker.ts): a 20,000-record build leaves about 85 MB of heap
// of which about 20 MB is live, and a thread started again for every change made
// each rebuild 1.3-2.3 s instead of about 0.3 s. Nothing else calls gc().
export const DNS_SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16', '--expose-gc'];
