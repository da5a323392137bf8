export default async function globalTeardown(): Promise<void> {
  const env = globalThis.__CAPI_DNS_TESTENV__;
  globalThis.__CAPI_DNS_TESTENV__ = undefined;
  if (env) await env.stop();
}
