import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CorefileError, type CorefileErrorReason } from './errors.js';
import { ensureForwardBlock, MARKER, removeForwardBlock } from './forward-block.js';

const corefile = (name: string): string =>
  readFileSync(
    path.join(path.dirname(fileURLToPath(import.meta.url)), 'testdata', `${name}.Corefile`),
    'utf8',
  );

const SHIPPED = ['kubeadm', 'eks', 'k3s', 'nodelocaldns', 'commented'];
const DNS_SERVER = '10.96.0.53';

const KUBEADM_BLOCK = `${MARKER}
xcc.test:53 {
    forward . 10.96.0.53
}
`;

function fails(fn: () => unknown, reason: CorefileErrorReason, message: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CorefileError);
  expect((caught as CorefileError).reason).toBe(reason);
  expect((caught as CorefileError).message).toMatch(message);
}

const ensure = (source: string, targets = [DNS_SERVER]): string =>
  ensureForwardBlock(source, 'xcc.test', targets).corefile;

describe('ensureForwardBlock', () => {
  it("appends the block to kubeadm's Corefile after a blank line, leaving every other byte", () => {
    const before = corefile('kubeadm');
    const { corefile: after, changed } = ensureForwardBlock(before, 'xcc.test', [DNS_SERVER]);
    expect(changed).toBe(true);
    expect(after).toBe(`${before}\n${KUBEADM_BLOCK}`);
  });

  it.each(SHIPPED)('keeps %s byte for byte as a prefix and is idempotent', (name) => {
    const before = corefile(name);
    const once = ensureForwardBlock(before, 'xcc.test', [DNS_SERVER]);
    expect(once.changed).toBe(true);
    expect(once.corefile.startsWith(before)).toBe(true);
    const twice = ensureForwardBlock(once.corefile, 'xcc.test', [DNS_SERVER]);
    expect(twice).toEqual({ corefile: once.corefile, changed: false });
  });

  it.each(SHIPPED)('removes from %s exactly what it added', (name) => {
    const before = corefile(name);
    expect(removeForwardBlock(ensure(before), 'xcc.test')).toEqual({ corefile: before, changed: true });
  });

  it('follows the indentation of the root block: two spaces in k3s, tabs by hand', () => {
    expect(ensure(corefile('k3s'))).toContain(`xcc.test:53 {\n  forward . ${DNS_SERVER}\n}\n`);
    expect(ensure(corefile('commented'))).toContain(`xcc.test:53 {\n\tforward . ${DNS_SERVER}\n}\n`);
  });

  it("copies the root block's bind, so the block listens where queries arrive", () => {
    expect(ensure(corefile('nodelocaldns'))).toMatch(
      /\nxcc\.test:53 \{\n {4}bind 169\.254\.20\.10 __PILLAR__DNS__SERVER__\n {4}forward \. 10\.96\.0\.53\n\}\n$/,
    );
    const demo = '.:53 {\n    bind 127.0.0.10\n    bind lo\n    errors\n}\n';
    expect(ensure(demo)).toBe(
      `${demo}\n${MARKER}\nxcc.test:53 {\n    bind 127.0.0.10 lo\n    forward . ${DNS_SERVER}\n}\n`,
    );
  });

  it("serves on the root block's port, or on CoreDNS's default when the root names none", () => {
    expect(ensure('.:1053 {\n  whoami\n}\n')).toContain('\nxcc.test:1053 {\n');
    expect(ensure('dns://.:5300 {\n  whoami\n}\n')).toContain('\nxcc.test:5300 {\n');
    expect(ensure('. {\n  whoami\n}\n')).toContain('\nxcc.test {\n');
    expect(ensure('cluster.local:53 {\n  whoami\n}\n')).toContain('\nxcc.test {\n');
  });

  it('writes the zone in canonical form whatever form it is given in', () => {
    const out = ensureForwardBlock('.:53 {\n    whoami\n}\n', 'XCC.Test.', [DNS_SERVER]).corefile;
    expect(out).toBe(`.:53 {\n    whoami\n}\n\n${KUBEADM_BLOCK}`);
    expect(ensureForwardBlock(out, 'xcc.test', [DNS_SERVER]).changed).toBe(false);
  });

  it('updates the targets in place when the dns-server address changes', () => {
    const first = ensure(corefile('kubeadm'));
    const { corefile: moved, changed } = ensureForwardBlock(first, 'xcc.test', ['10.96.0.54', '10.96.0.55']);
    expect(changed).toBe(true);
    expect(moved).toBe(first.replace('forward . 10.96.0.53', 'forward . 10.96.0.54 10.96.0.55'));
  });

  it('accepts targets with ports and IPv6, and drops duplicates', () => {
    const out = ensure('', ['127.0.0.1:5353', '[fd00::53]:53', 'fd00::54', '127.0.0.1:5353']);
    expect(out).toContain('forward . 127.0.0.1:5353 [fd00::53]:53 fd00::54\n');
  });

  it('writes only the block into an empty Corefile, and ends a file without a final newline first', () => {
    expect(ensure('')).toBe(KUBEADM_BLOCK.replace(':53', ''));
    expect(ensure('.:53 {\n  whoami\n}')).toBe(
      `.:53 {\n  whoami\n}\n\n${KUBEADM_BLOCK.replace('    ', '  ')}`,
    );
  });

  it('keeps CRLF line ends', () => {
    const crlf = corefile('eks').replace(/\n/g, '\r\n');
    const out = ensure(crlf);
    expect(out.startsWith(crlf)).toBe(true);
    expect(out.slice(crlf.length)).toBe(`\r\n${KUBEADM_BLOCK.replace(/\n/g, '\r\n')}`);
    expect(ensureForwardBlock(out, 'xcc.test', [DNS_SERVER]).changed).toBe(false);
    expect(removeForwardBlock(out, 'xcc.test').corefile).toBe(crlf);
  });

  describe('repairs', () => {
    const patched = ensure(corefile('kubeadm'));

    it.each([
      ['a changed target', patched.replace('forward . 10.96.0.53', 'forward . 10.0.0.1')],
      [
        'an added plugin',
        patched.replace('    forward . 10.96.0.53\n', '    cache 300\n    forward . 10.96.0.53\n'),
      ],
      ['a removed forward line', patched.replace('    forward . 10.96.0.53\n', '')],
      ['a changed port', patched.replace('xcc.test:53 {', 'xcc.test:1053 {')],
      ['an edited marker', patched.replace(MARKER, '# capi-dns: managed, hands off')],
      [
        'a re-indented block',
        patched.replace('    forward . 10.96', '\t\tforward . 10.96').replace(/\n\}\n$/, '\n  }  \n'),
      ],
      ['comments inside the block', patched.replace('    forward . 10.96', '    # why\n    forward . 10.96')],
      ['a nested block', patched.replace('10.96.0.53\n', '10.96.0.53 {\n        max_fails 0\n    }\n')],
    ])('%s', (_name, broken) => {
      expect(ensureForwardBlock(broken, 'xcc.test', [DNS_SERVER])).toEqual({
        corefile: patched,
        changed: true,
      });
    });

    it('a marker whose block was deleted: the stray marker goes, the block comes back at the end', () => {
      const orphaned = `${corefile('kubeadm')}\n${MARKER}\n`;
      expect(ensure(orphaned)).toBe(patched);
    });

    it('a block that is no longer last: repaired where it stands', () => {
      const moved = `${patched.replace('10.96.0.53', '10.0.0.1')}\nexample.org:53 {\n    whoami\n}\n`;
      expect(ensure(moved)).toBe(`${patched}\nexample.org:53 {\n    whoami\n}\n`);
    });

    it('duplicated blocks: the first is kept, the others removed', () => {
      const twice = `${patched}\n${KUBEADM_BLOCK}\n${KUBEADM_BLOCK.replace('10.96.0.53', '10.0.0.1')}`;
      expect(ensure(twice)).toBe(patched);
    });

    it('the block placed first: kept there, nothing else moves', () => {
      const first = `${KUBEADM_BLOCK.replace('10.96.0.53', '10.0.0.1')}\n${corefile('kubeadm')}`;
      expect(ensure(first)).toBe(`${KUBEADM_BLOCK}\n${corefile('kubeadm')}`);
    });
  });

  describe('leaves alone what it does not own', () => {
    it.each([
      [
        'the walkthrough hand edit (no port)',
        corefile('hand-patched'),
        /line 7: .*"xcc\.test" already serves xcc\.test/,
      ],
      ['an explicit port and a trailing dot', '.:53 {\n}\nXCC.test.:53 {\n}\n', /line 3: .*XCC\.test\.:53/],
      ['a dns:// scheme', '.:53 {\n}\ndns://xcc.test {\n}\n', /dns:\/\/xcc\.test/],
      ['one key among several', '.:53 {\n}\nexample.org:53, xcc.test:53 {\n}\n', /xcc\.test:53/],
      ['a block that lost its marker', '.:53 {\n}\n\nxcc.test:53 {\n    forward . 10.96.0.53\n}\n', /line 4/],
    ])('reports a conflict with %s', (_name, source, message) => {
      fails(() => ensure(source), 'Conflict', message);
    });

    it('names what to do in the conflict message', () => {
      fails(() => ensure(corefile('hand-patched')), 'Conflict', /remove it .* or opt the cluster out/);
    });

    it.each([
      ['another port', 'xcc.test:1053 {\n}\n'],
      ['another transport', 'tls://xcc.test {\n}\n'],
      ['a subzone', 'clusters.xcc.test:53 {\n}\n'],
      ['a parent zone', 'test:53 {\n}\n'],
      ['a snippet named like the zone', '(xcc.test) {\n}\n'],
      ['a key behind an environment variable', '{$ZONE}:53 {\n}\n'],
    ])('adds the block next to a block for %s', (_name, other) => {
      const source = `.:53 {\n    whoami\n}\n${other}`;
      expect(ensure(source)).toBe(`${source}\n${KUBEADM_BLOCK}`);
    });

    it("ignores a marker inside someone's block and one followed by another zone's block", () => {
      const inside = `.:53 {\n    ${MARKER}\n    whoami\n}\n`;
      expect(ensure(inside)).toBe(`${inside}\n${KUBEADM_BLOCK}`);
      const other = `.:53 {\n}\n${MARKER}\nother.test:53 {\n    forward . 10.0.0.1\n}\n`;
      expect(ensure(other)).toBe(`${other}\n${KUBEADM_BLOCK}`);
      expect(removeForwardBlock(other, 'xcc.test')).toEqual({ corefile: other, changed: false });
    });
  });

  it.each([
    ['an unbalanced brace', `${corefile('kubeadm')}}\n`, /unbalanced/],
    ['a block cut in half', corefile('kubeadm').slice(0, 200), /never closed/],
    ['an unterminated quote', '.:53 {\n  log . "{remote}\n}\n', /unterminated quoted string/],
    [
      'a managed block missing its closing brace',
      `.:53 {\n}\n${KUBEADM_BLOCK.replace('}\n', '')}`,
      /never closed/,
    ],
  ])('refuses a Corefile with %s and changes nothing', (_name, source, message) => {
    fails(() => ensure(source), 'Unparseable', message);
    fails(() => removeForwardBlock(source, 'xcc.test'), 'Unparseable', message);
  });

  it.each([
    ['the root zone', '.', [DNS_SERVER], /"\." is not a zone/],
    ['a zone with a space', 'xcc test', [DNS_SERVER], /is not a zone/],
    ['a zone with a brace', 'xcc.test{', [DNS_SERVER], /is not a zone/],
    ['no targets', 'xcc.test', [], /no forward target/],
    ['a target that closes the block', 'xcc.test', ['10.0.0.1 }'], /not a forward target/],
    ['a target with a comment', 'xcc.test', ['10.0.0.1#x'], /not a forward target/],
    ['an empty target', 'xcc.test', [''], /not a forward target/],
  ])('refuses %s', (_name, zone, targets, message) => {
    fails(() => ensureForwardBlock(corefile('kubeadm'), zone, targets), 'InvalidArgument', message);
  });
});

describe('removeForwardBlock', () => {
  it('changes nothing when there is no managed block', () => {
    for (const name of SHIPPED) {
      expect(removeForwardBlock(corefile(name), 'xcc.test')).toEqual({
        corefile: corefile(name),
        changed: false,
      });
    }
  });

  it('never removes a block a person wrote for the zone', () => {
    const hand = corefile('hand-patched');
    expect(removeForwardBlock(hand, 'xcc.test')).toEqual({ corefile: hand, changed: false });
  });

  it('removes a modified block, duplicates and a stray marker', () => {
    const base = corefile('kubeadm');
    const messy = `${base}\n${KUBEADM_BLOCK.replace('10.96.0.53', '1.2.3.4')}\n${KUBEADM_BLOCK}\n${MARKER}\n`;
    expect(removeForwardBlock(messy, 'xcc.test')).toEqual({ corefile: base, changed: true });
  });

  it('removes a block in the middle without leaving a double blank line', () => {
    const tail = 'example.org:53 {\n    whoami\n}\n';
    const middle = `${corefile('kubeadm')}\n${KUBEADM_BLOCK}\n${tail}`;
    expect(removeForwardBlock(middle, 'xcc.test').corefile).toBe(`${corefile('kubeadm')}\n${tail}`);
  });

  it('removes only the block of the zone it is asked about', () => {
    const two = `${ensure(corefile('kubeadm'))}\n${MARKER}\nother.test:53 {\n    forward . 10.0.0.1\n}\n`;
    expect(removeForwardBlock(two, 'other.test').corefile).toBe(ensure(corefile('kubeadm')));
  });
});
