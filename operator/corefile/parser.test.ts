import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAddress } from './address.js';
import { CorefileError } from './errors.js';
import { parseCorefile, type ServerBlock } from './parser.js';

const corefile = (name: string): string =>
  readFileSync(
    path.join(path.dirname(fileURLToPath(import.meta.url)), 'testdata', `${name}.Corefile`),
    'utf8',
  );

const keys = (b: ServerBlock): string[] => b.keys.map((k) => k.text);
const names = (b: ServerBlock): string[] => b.directives.map((d) => d.name.text);

function unparseable(source: string, message: RegExp): void {
  let caught: unknown;
  try {
    parseCorefile(source);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CorefileError);
  expect((caught as CorefileError).reason).toBe('Unparseable');
  expect((caught as CorefileError).message).toMatch(message);
}

describe('parseCorefile', () => {
  it("reads kubeadm's Corefile: one root block, its directives and their nested blocks", () => {
    const source = corefile('kubeadm');
    const { blocks, imports } = parseCorefile(source);
    expect(blocks).toHaveLength(1);
    const [root] = blocks as [ServerBlock];
    expect(keys(root)).toEqual(['.:53']);
    expect(root.addresses).toEqual([{ raw: '.:53', transport: 'dns', zone: '.', port: '53' }]);
    expect(names(root)).toEqual([
      'errors',
      'health',
      'ready',
      'kubernetes',
      'prometheus',
      'forward',
      'cache',
      'loop',
      'reload',
      'loadbalance',
    ]);
    const kubernetes = root.directives[3];
    expect(kubernetes?.args.map((a) => a.text)).toEqual(['cluster.local', 'in-addr.arpa', 'ip6.arpa']);
    expect(source.slice(kubernetes?.block?.open.start, kubernetes?.block?.close.end)).toMatch(
      /^\{\n\s+pods insecure[^}]*\}$/,
    );
    expect(source.slice(root.close.start)).toBe('}\n');
    expect(imports).toEqual([]);
  });

  it('reads the EKS, k3s and NodeLocal DNSCache Corefiles', () => {
    expect(parseCorefile(corefile('eks')).blocks.map(keys)).toEqual([['.:53']]);

    const k3s = parseCorefile(corefile('k3s'));
    expect(k3s.blocks.map(keys)).toEqual([['.:53']]);
    expect(names(k3s.blocks[0] as ServerBlock)).toContain('import');
    expect(k3s.imports.map((args) => args.map((a) => a.text))).toEqual([['/etc/coredns/custom/*.server']]);

    const nodelocal = parseCorefile(corefile('nodelocaldns'));
    expect(nodelocal.blocks.map(keys)).toEqual([['cluster.local:53'], ['.:53']]);
    const bind = nodelocal.blocks[1]?.directives.find((d) => d.name.text === 'bind');
    expect(bind?.args.map((a) => a.text)).toEqual(['169.254.20.10', '__PILLAR__DNS__SERVER__']);
  });

  it('reads comments with braces, quoted braces, snippets, env keys and a block opened on the next line', () => {
    const parsed = parseCorefile(corefile('commented'));
    expect(parsed.blocks.map(keys)).toEqual([['(common)'], ['{$EXTRA_ZONE}:53'], ['.:53']]);
    expect(parsed.blocks.map((b) => b.snippet)).toEqual([true, false, false]);
    expect(parsed.blocks[1]?.addresses[0]?.zone).toBeUndefined();
    const root = parsed.blocks[2] as ServerBlock;
    expect(names(root)).toEqual(['import', 'kubernetes', 'forward', 'cache']);
    expect(root.directives[1]?.block).toBeDefined();
    expect(parsed.comments.map((c) => c.line)).toEqual([1, 4, 12, 18]);
  });

  it('reads several keys, with commas across lines, and the opening brace on its own line', () => {
    const parsed = parseCorefile(
      'a.test:53, b.test:53,\n  dns://C.Test.:1053\n{\n  whoami\n}\nd.test e.test {\n}\n',
    );
    expect(parsed.blocks.map(keys)).toEqual([
      ['a.test:53,', 'b.test:53,', 'dns://C.Test.:1053'],
      ['d.test', 'e.test'],
    ]);
    expect(parsed.blocks[0]?.addresses.map((a) => [a.zone, a.port])).toEqual([
      ['a.test.', '53'],
      ['b.test.', '53'],
      ['c.test.', '1053'],
    ]);
    expect(parsed.blocks[1]?.directives).toEqual([]);
  });

  it('reads one-line blocks and deep nesting', () => {
    const parsed = parseCorefile('.:53 { whoami }\nx.test { a { b { c } } d }\n');
    expect(parsed.blocks.map(names)).toEqual([['whoami'], ['a', 'd']]);
  });

  it.each([
    ['an unbalanced closing brace', '.:53 {\n errors\n}\n}\n', /line 4: unbalanced "}"/],
    ['a block never closed', '.:53 {\n errors\n', /line 1: block is never closed/],
    ['a nested block never closed', '.:53 {\n health {\n lameduck 5s\n}\n', /block is never closed/],
    ['an unterminated quote', '.:53 {\n log . "x\n}\n', /line 2: unterminated quoted string/],
    ['a block without keys', '{\n errors\n}\n', /line 1: block without a server address/],
    ['a brace-less server block', '.:53\nerrors\nforward . 1.1.1.1\n', /line 1: .*has no braces/],
    ['a brace opening a block inside a block', '.:53 {\n {\n }\n}\n', /"\{" without a directive/],
    ['an import without arguments', 'import\n', /import without a file/],
  ])('refuses %s', (_name, source, message) => {
    unparseable(source, message);
  });

  it('accepts an empty Corefile', () => {
    expect(parseCorefile('').blocks).toEqual([]);
  });
});

describe('parseAddress', () => {
  it.each([
    ['.', 'dns', '.', undefined],
    ['.:53', 'dns', '.', '53'],
    ['XCC.test', 'dns', 'xcc.test.', undefined],
    ['xcc.test.:5353', 'dns', 'xcc.test.', '5353'],
    ['dns://xcc.test:53', 'dns', 'xcc.test.', '53'],
    ['tls://xcc.test', 'tls', 'xcc.test.', undefined],
    ['grpc://.:443', 'grpc', '.', '443'],
    ['foo://x.test', 'unknown', 'x.test.', undefined],
    ['{$ZONE}:53', 'dns', undefined, '53'],
  ])('%s', (raw, transport, zone, port) => {
    expect(parseAddress(raw)).toEqual({ raw, transport, zone, port });
  });
});
