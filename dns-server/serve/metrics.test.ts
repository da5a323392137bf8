import { Metrics } from './metrics.js';

const lines = async (m: Metrics, prefix: string) =>
  (await m.render()).split('\n').filter((l) => l.startsWith(prefix));

describe('dns-server metrics', () => {
  it("counts queries per zone, transport, type and rcode in CoreDNS's shape, with this process's and its answerers' counts summed", async () => {
    const primary = new Metrics();
    const answerer = new Metrics({ serve: false });
    primary.countQuery('udp', 'xcc.test', 1, 0, 0.000004);
    primary.countQuery('tcp', 'xcc.test', 33, 3, 0.00003);
    primary.countQuery('udp', undefined, 1, 5, 0.000002); // outside every zone: REFUSED
    primary.countQuery('udp', undefined, undefined, -1, 0.2); // not parsed, dropped
    answerer.countQuery('udp', 'xcc.test', 1, 0, 0.000004);
    answerer.countQuery('udp', 'xcc.test', 4242, 0, 0.000004); // not a monitored type
    answerer.udpNotSent = () => [2, 5];
    primary.setPeer(1, JSON.parse(JSON.stringify(answerer.counters())));
    expect(await lines(primary, 'capi_dns_server_udp_answers_not_sent_total{')).toEqual([
      'capi_dns_server_udp_answers_not_sent_total{reason="refused"} 2',
      'capi_dns_server_udp_answers_not_sent_total{reason="buffer_full"} 5',
    ]);
    expect(await lines(primary, 'capi_dns_server_dns_requests_total{')).toEqual([
      'capi_dns_server_dns_requests_total{zone="xcc.test.",proto="udp",type="A"} 2',
      'capi_dns_server_dns_requests_total{zone="xcc.test.",proto="udp",type="other"} 1',
      'capi_dns_server_dns_requests_total{zone="xcc.test.",proto="tcp",type="SRV"} 1',
      'capi_dns_server_dns_requests_total{zone="dropped",proto="udp",type="A"} 1',
      'capi_dns_server_dns_requests_total{zone="dropped",proto="udp",type="unparsed"} 1',
    ]);
    expect(await lines(primary, 'capi_dns_server_dns_responses_total{')).toEqual([
      'capi_dns_server_dns_responses_total{zone="xcc.test.",rcode="NOERROR"} 3',
      'capi_dns_server_dns_responses_total{zone="xcc.test.",rcode="NXDOMAIN"} 1',
      'capi_dns_server_dns_responses_total{zone="dropped",rcode="REFUSED"} 1',
      'capi_dns_server_dns_responses_total{zone="dropped",rcode="dropped"} 1',
    ]);
    const duration = await lines(primary, 'capi_dns_server_dns_request_duration_seconds');
    expect(duration).toContain(
      'capi_dns_server_dns_request_duration_seconds_bucket{zone="xcc.test.",le="0.00001"} 3',
    );
    expect(duration).toContain(
      'capi_dns_server_dns_request_duration_seconds_bucket{zone="xcc.test.",le="0.000025"} 3',
    );
    expect(duration).toContain(
      'capi_dns_server_dns_request_duration_seconds_bucket{zone="xcc.test.",le="0.00005"} 4',
    );
    expect(duration).toContain(
      'capi_dns_server_dns_request_duration_seconds_bucket{zone="xcc.test.",le="+Inf"} 4',
    );
    expect(duration).toContain('capi_dns_server_dns_request_duration_seconds_count{zone="xcc.test."} 4');
    expect(duration).toContain(
      'capi_dns_server_dns_request_duration_seconds_bucket{zone="dropped",le="0.1"} 1',
    );
    expect(duration).toContain(
      'capi_dns_server_dns_request_duration_seconds_bucket{zone="dropped",le="+Inf"} 2',
    );
  });

  it('reports how long the oldest change not built yet has waited, 0 when there is none', async () => {
    const m = new Metrics();
    expect(await lines(m, 'capi_dns_server_zone_build_pending_seconds ')).toEqual([
      'capi_dns_server_zone_build_pending_seconds 0',
    ]);
    m.unbuiltSince = Date.now() - 90_000;
    const [line] = await lines(m, 'capi_dns_server_zone_build_pending_seconds ');
    expect(Number(line!.split(' ')[1])).toBeGreaterThanOrEqual(90);
  });

  it('carries its version in capi_dns_server_build_info', async () => {
    expect(await lines(new Metrics(), 'capi_dns_server_build_info{')).toEqual([
      expect.stringMatching(
        /^capi_dns_server_build_info\{version="\d+\.\d+\.\d+",nodejs_version="v\d+\.\d+\.\d+"\} 1$/,
      ),
    ]);
  });
});
