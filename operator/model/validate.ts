// Validation of GatewayDNS specs that got past the API server: objects stored
// under an older CRD, or written before a field became stricter. A bad object
// becomes an Invalid condition with a readable message, never an exception.
import { Ajv } from 'ajv';
import {
  DEFAULT_ANSWER_POLICY,
  DEFAULT_GATEWAY_LABEL,
  DEFAULT_NODE_ADDRESS_TYPES,
  DEFAULT_RESOLUTION_TYPE,
  DEFAULT_TTL,
  GATEWAYDNS_SPEC_SCHEMA,
  type AnswerPolicy,
  type GatewayDNSSpec,
  type LabelSelector,
  type NodeAddressType,
  type ResolutionType,
} from '../../api/index.js';

/** A spec with every default filled in: what desired.ts works from. */
export interface EffectiveSpec {
  clusterSelector: LabelSelector;
  serviceNamespace: string;
  serviceName: string;
  resolutionType: ResolutionType;
  answer: AnswerPolicy;
  hostnames: string[];
  gatewayLabel: string;
  nodeAddressTypes: NodeAddressType[];
  ttl: number;
  /** spec.mirror with its defaults (the source Service's namespace and name); absent when not asked for. */
  mirror?: { namespace: string; name: string };
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
  const selectorProblem = checkSelector(spec.clusterSelector);
  if (selectorProblem) return { valid: false, message: selectorProblem };
  const [serviceNamespace = '', serviceName = ''] = spec.service.split('/');
  return {
    valid: true,
    spec: {
      clusterSelector: spec.clusterSelector,
      serviceNamespace,
      serviceName,
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
    },
  };
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
function checkSelector(selector: LabelSelector): string | undefined {
  for (const [i, req] of (selector.matchExpressions ?? []).entries()) {
    const needsValues = req.operator === 'In' || req.operator === 'NotIn';
    const hasValues = (req.values?.length ?? 0) > 0;
    if (needsValues !== hasValues)
      return `spec.clusterSelector.matchExpressions[${i}]: ${req.operator} ${needsValues ? 'needs at least one value' : 'takes no values'}`;
  }
  return undefined;
}
