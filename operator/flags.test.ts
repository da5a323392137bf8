import { parseFlags } from './flags.js';

describe('parseFlags: untrusted kubeconfig opt-ins', () => {
  it.each([
    [[], false, false],
    [['--insecure-kubeconfig-exec'], true, false],
    [['--insecure-kubeconfig-tls'], false, true],
    [['--insecure-kubeconfig-exec', '--insecure-kubeconfig-tls'], true, true],
  ])('%j: exec %s, tls %s', (argv, exec, tls) => {
    const flags = parseFlags(argv);
    expect(flags.insecureKubeconfigExec).toBe(exec);
    expect(flags.insecureKubeconfigTls).toBe(tls);
  });
});
