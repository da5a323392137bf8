// Validation of GatewayDNS specs that got past the API server: objects stored
// under an older CRD, or written before a field became stricter. A bad object
// becomes an Invalid condition with a readable message, never an exception.
import { Ajv } from 'ajv';
import {
  DEFAULT_ANSWER_POLICY,
  DEFAULT_GATEWAY_LABEL,
  DEFAULT_NODE_ADDRESS_TYPES,
  DEFAULT_RESOLUTION_TYPE,
  DEFAULT_HEALTH_CHECK,
  DEFAULT_TTL,
  DEFAULT_WHEN_NONE_HEALTHY,
  GATEWAYDNS_SPEC_SCHEMA,
  type AnswerPolicy,
  type ClusterWeight,
  type FailoverTier,
  type HealthCheckSpec,
  type WhenNoneHealthy,
  type GatewayDNSSpec,
  type GatewayRef,
  type LabelSelector,
  type NodeAddressType,
  type ResolutionType,
} from '../../api/index.js';

/** A spec with every default filled in: what desired.ts works from. */
export interface EffectiveSpec {
  clusterSelector: LabelSelector;
  /** spec.service; both '' when the source is spec.gatewayRef. */
  serviceNamespace: string;
  serviceName: string;
  /** spec.gatewayRef: the source is a Gateway API Gateway, not a Service (resolutionType is loadBalancer). */
  gateway?: GatewayRef;
  resolutionType: ResolutionType;
  answer: AnswerPolicy;
  hostnames: string[];
  gatewayLabel: string;
  nodeAddressTypes: NodeAddressType[];
  ttl: number;
  /** spec.mirror with its defaults (the source Service's namespace and name); absent when not asked for. */
  mirror?: { namespace: string; name: string };
  /** The traffic policy; absent when none is asked for (no tiers, weights or health check). */
  trafficPolicy?: TrafficPolicySpec;
}

/** spec.failover, spec.weights, spec.healthCheck and spec.whenNoneHealthy with their defaults. */
export interface TrafficPolicySpec {
  tiers: FailoverTier[];
  /** Undefined: no weights, the answering tier's clusters answer together. */
  weights?: ClusterWeight[];
  /** Its port undefined: the Service's first port (facts.probePort). */
  healthCheck?: Omit<Required<HealthCheckSpec>, 'port' | 'path' | 'host'> &
    Pick<HealthCheckSpec, 'port' | 'path' | 'host'>;
  whenNoneHealthy: WhenNoneHealthy;
}

export type Validation = { valid: true; spec: EffectiveSpec } | { valid: false; message: string };

const ajv = new Ajv({ allErrors: true, strict: false });
const validateSpec = ajv.compile<GatewayDNSSpec>(GATEWAYDNS_SPEC_SCHEMA);

export function validateGatewayDnsSpec(spec: unknown): Validation {
  if (spec === undefined || spec === null) return { valid: false, message: 'spec is missing' };
  if (!validateSpec(spec)) {
    const message = (validateSpec.errors ?? [])
      .map((e) => `spec${e.instancePath.replace(/\//g, '.')} ${friendlier(e) ?? e.message ?? 'is invalid'}`)
      .join('; ');
    return { valid: false, message };
  }
  const selectorProblem =
    checkSelector(spec.clusterSelector, 'spec.clusterSelector') ??
    (spec.failover ?? [])
      .map((t, i) => checkSelector(t.clusterSelector, `spec.failover[${i}].clusterSelector`))
      .find(Boolean) ??
    (spec.weights ?? [])
      .map((w, i) => checkSelector(w.clusterSelector, `spec.weights[${i}].clusterSelector`))
      .find(Boolean) ??
    checkSource(spec) ??
    checkTrafficPolicy(spec);
  if (selectorProblem) return { valid: false, message: selectorProblem };
  const [serviceNamespace = '', serviceName = ''] = (spec.service ?? '/').split('/');
  return {
    valid: true,
    spec: {
      clusterSelector: spec.clusterSelector,
      serviceNamespace,
      serviceName,
      ...(spec.gatewayRef
        ? { gateway: { namespace: spec.gatewayRef.namespace, name: spec.gatewayRef.name } }
        : {}),
      resolutionType: spec.resolutionType ?? DEFAULT_RESOLUTION_TYPE,
      answer: spec.answer ?? DEFAULT_ANSWER_POLICY,
      hostnames: [...new Set(spec.hostnames ?? [])].sort(),
      gatewayLabel: spec.gatewayLabel ?? DEFAULT_GATEWAY_LABEL,
      nodeAddressTypes: spec.nodeAddressTypes?.length ? spec.nodeAddressTypes : DEFAULT_NODE_ADDRESS_TYPES,
      ttl: spec.ttl ?? DEFAULT_TTL,
      ...(spec.mirror
        ? {
            mirror: {
              namespace: spec.mirror.namespace ?? serviceNamespace,
              name: spec.mirror.name ?? serviceName,
            },
          }
        : {}),
      ...trafficPolicyOf(spec),
    },
  };
}

function trafficPolicyOf(spec: GatewayDNSSpec): { trafficPolicy?: TrafficPolicySpec } {
  const tiers = spec.failover ?? [];
  if (!tiers.length && !spec.weights?.length && !spec.healthCheck) return {};
  const check = spec.healthCheck;
  return {
    trafficPolicy: {
      tiers,
      ...(spec.weights?.length ? { weights: spec.weights } : {}),
      ...(check
        ? {
            healthCheck: {
              protocol: check.protocol ?? DEFAULT_HEALTH_CHECK.protocol,
              periodSeconds: check.periodSeconds ?? DEFAULT_HEALTH_CHECK.periodSeconds,
              timeoutSeconds: check.timeoutSeconds ?? DEFAULT_HEALTH_CHECK.timeoutSeconds,
              failureThreshold: check.failureThreshold ?? DEFAULT_HEALTH_CHECK.failureThreshold,
              successThreshold: check.successThreshold ?? DEFAULT_HEALTH_CHECK.successThreshold,
              ...(check.port !== undefined ? { port: check.port } : {}),
              ...(check.protocol !== 'TCP' && check.protocol !== undefined
                ? { path: check.path ?? '/', ...(check.host ? { host: check.host } : {}) }
                : {}),
            },
          }
        : {}),
      whenNoneHealthy: spec.whenNoneHealthy ?? DEFAULT_WHEN_NONE_HEALTHY,
    },
  };
}

/** The CRD's CEL rules on the source, which an old CRD may not have enforced. */
function checkSource(spec: GatewayDNSSpec): string | undefined {
  if ((spec.service === undefined) === (spec.gatewayRef === undefined))
    return 'exactly one of spec.service and spec.gatewayRef';
  if (!spec.gatewayRef) return undefined;
  if ((spec.resolutionType ?? DEFAULT_RESOLUTION_TYPE) !== 'loadBalancer')
    return "spec.gatewayRef takes its addresses from the Gateway's status; resolutionType applies to spec.service";
  if (spec.mirror) return 'spec.mirror mirrors a Service; it needs spec.service, not spec.gatewayRef';
  return undefined;
}

/** The CRD's CEL rules on the traffic policy, which an old CRD may not have enforced. */
function checkTrafficPolicy(spec: GatewayDNSSpec): string | undefined {
  const answer = spec.answer ?? DEFAULT_ANSWER_POLICY;
  const tiers = spec.failover?.length ?? 0;
  if (answer === 'failover' && !tiers) return 'spec.answer failover needs at least one tier in spec.failover';
  if (answer === 'all' && tiers) return 'spec.failover applies to answer failover or localFirst, not all';
  const check = spec.healthCheck;
  if (check) {
    const protocol = check.protocol ?? DEFAULT_HEALTH_CHECK.protocol;
    if (protocol === 'TCP' && (check.path !== undefined || check.host !== undefined))
      return 'spec.healthCheck: path and host are for protocol HTTP and HTTPS';
    const period = check.periodSeconds ?? DEFAULT_HEALTH_CHECK.periodSeconds;
    const timeout = check.timeoutSeconds ?? DEFAULT_HEALTH_CHECK.timeoutSeconds;
    if (timeout > period)
      return `spec.healthCheck: timeoutSeconds (${timeout}) must not exceed periodSeconds (${period})`;
  }
  return undefined;
}

/** Messages that say what a name must look like, where ajv would only print the pattern. */
function friendlier(e: {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}): string | undefined {
  if (e.instancePath === '/mirror/name' && e.keyword === 'pattern')
    return 'must be a Service name: lower-case letters, digits and "-", starting with a letter and ending with a letter or digit';
  if (e.instancePath === '/mirror/namespace' && e.keyword === 'pattern')
    return 'must be a namespace name: lower-case letters, digits and "-", starting and ending with a letter or digit';
  if (e.instancePath === '/mirror' && e.keyword === 'additionalProperties')
    return `has no field "${String(e.params.additionalProperty)}" (only namespace and name)`;
  return undefined;
}

/** The CRD's CEL rule, which an old CRD may not have enforced. */
function checkSelector(selector: LabelSelector, at: string): string | undefined {
  for (const [i, req] of (selector.matchExpressions ?? []).entries()) {
    const needsValues = req.operator === 'In' || req.operator === 'NotIn';
    const hasValues = (req.values?.length ?? 0) > 0;
    if (needsValues !== hasValues)
      return `${at}.matchExpressions[${i}]: ${req.operator} ${needsValues ? 'needs at least one value' : 'takes no values'}`;
  }
  return undefined;
}
