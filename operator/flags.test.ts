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

describe('--paused-departure-grace', () => {
  it('defaults to 10 minutes and takes a duration', () => {
    expect(parseFlags([]).pausedDepartureGraceMs).toBe(600_000);
    expect(parseFlags(['--paused-departure-grace', '30s']).pausedDepartureGraceMs).toBe(30_000);
    expect(() => parseFlags(['--paused-departure-grace', 'soon'])).toThrow(/--paused-departure-grace/);
  });
});
