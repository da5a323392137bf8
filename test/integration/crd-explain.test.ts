// Our CRDs as `kubectl explain` shows them on a real API server: every field
// of crds/ has a description in the OpenAPI v3 the API server publishes (what
// kubectl explain reads), the kinds' own included, and GatewayDNS answers to
// its short name.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { testEnvInfo } from '../support/environment.js';
import { eventually, installCrds, readManifests } from '../support/kube.js';
import { binPath, repoRoot } from '../support/paths.js';
import { clusterOf, kubeConfigOf } from '../support/testenv.js';

const run = promisify(execFile);
const info = testEnvInfo();
const CLUSTER = 'management';
const GROUP = 'connectivity.tanzu.vmware.com';

interface Schema {
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
}

const kubectl = async (args: string[]) =>
  (
    await run(binPath('kubectl'), ['--kubeconfig', clusterOf(info, CLUSTER).kubeconfig, ...args], {
      maxBuffer: 64 << 20,
    })
  ).stdout;

/** Every field path of a schema (a.b, a.b[].c) without a description. */
function undescribed(schema: Schema, at: string): string[] {
  const out: string[] = [];
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const here = `${at}.${name}`;
    // The API server wraps a field whose schema is a reference in allOf, the description beside it.
    if (!field.description && !field.allOf?.some((s) => s.description)) out.push(here);
    out.push(...undescribed(field, here));
    if (field.items) out.push(...undescribed(field.items, `${here}[]`));
  }
  return out;
}

beforeAll(async () => {
  await installCrds(kubeConfigOf(info, CLUSTER), readManifests(path.join(repoRoot(), 'crds')));
});

describe.each(['GatewayDNS', 'DNSRecordSet'])('kubectl explain %s', (kind) => {
  it('has a description for the kind and every field, as the API server publishes them', async () => {
    const schema = await eventually(
      async () => {
        const doc = JSON.parse(await kubectl(['get', '--raw', `/openapi/v3/apis/${GROUP}/v1alpha1`])) as {
          components: { schemas: Record<string, Schema> };
        };
        const found = Object.entries(doc.components.schemas).find(([name]) => name.endsWith(`.${kind}`))?.[1];
        if (!found) throw new Error(`no ${kind} in the API server's OpenAPI v3`);
        // Published after the CRD's update, a moment later: wait for the descriptions crds/ has now.
        if (!found.properties?.spec?.description) throw new Error(`${kind}'s spec has no description yet`);
        return found;
      },
      30_000,
      200,
    );
    expect(schema.description).toBeTruthy();
    expect(undescribed(schema, kind.toLowerCase())).toEqual([]);
    // What a person types.
    const explained = await kubectl(['explain', `${kind.toLowerCase()}.spec`]);
    expect(explained).toMatch(/DESCRIPTION:\n\s+\S/);
  });
});

it('kubectl explain gwdns: the short name of GatewayDNS, its description and status fields', async () => {
  expect(await kubectl(['explain', 'gwdns'])).toContain('GatewayDNS publishes a Service');
  expect(await kubectl(['explain', 'gwdns.status.clusters.lastSeen'])).toContain(
    "When the operator last read this cluster's Service or Gateway.",
  );
});
