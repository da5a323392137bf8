import { siblingFolderCircles } from './import-cycles.js';

describe('siblingFolderCircles', () => {
  it('finds two sibling folders importing each other through different files', () => {
    const circles = siblingFolderCircles({
      'operator/gatewaydns/sources.ts': ['operator/mirror/reconciler.ts'],
      'operator/mirror/reconciler.ts': [],
      'operator/mirror/status.ts': ['operator/gatewaydns/conditions.ts'],
      'operator/gatewaydns/conditions.ts': [],
    });
    expect(circles).toEqual([
      {
        parent: 'operator',
        units: ['operator/gatewaydns/', 'operator/mirror/'],
        examples: expect.arrayContaining([
          ['operator/gatewaydns/sources.ts', 'operator/mirror/reconciler.ts'],
          ['operator/mirror/status.ts', 'operator/gatewaydns/conditions.ts'],
        ]),
      },
    ]);
  });

  it("counts a folder's own files as a sibling of its subfolders", () => {
    const circles = siblingFolderCircles({
      'dns-server/main.ts': ['dns-server/sources/file.ts'],
      'dns-server/sources/file.ts': ['dns-server/log.ts'],
      'dns-server/log.ts': [],
    });
    expect(circles.map((c) => [c.parent, c.units])).toEqual([
      ['dns-server', ['dns-server/*.ts', 'dns-server/sources/']],
    ]);
  });

  it('takes each folder with everything below it, and finds circles of three', () => {
    const circles = siblingFolderCircles({
      'a/deep/x.ts': ['b/y.ts'],
      'b/y.ts': ['c/z.ts'],
      'c/z.ts': ['a/other.ts'],
      'a/other.ts': [],
    });
    expect(circles.map((c) => [c.parent, c.units])).toEqual([['', ['a/', 'b/', 'c/']]]);
  });

  it('finds nothing when imports go one way, however many files', () => {
    expect(
      siblingFolderCircles({
        'operator/gatewaydns/reconciler.ts': ['operator/mirror/reconciler.ts', 'operator/model/facts.ts'],
        'operator/mirror/reconciler.ts': ['operator/model/facts.ts'],
        'operator/model/facts.ts': ['api/index.ts'],
        'operator/model/endpoints.ts': ['operator/model/facts.ts'],
        'api/index.ts': [],
      }),
    ).toEqual([]);
  });
});
