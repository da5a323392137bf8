// The EndpointSlices our mirrors keep (our endpointslice.kubernetes.io/managed-by
// value): an informer of its own, so that releasing the sources' slice
// informer never blinds the mirror writer.
import { ENDPOINTSLICE_MANAGED_BY_LABEL, MIRROR_CONTROLLER } from '../../../../api/index.js';
import { endpointSlicesType } from '../../../manager/clusters/kinds.js';

export const MIRROR_ENDPOINT_SLICES = endpointSlicesType(
  'MirrorEndpointSlice',
  `${ENDPOINTSLICE_MANAGED_BY_LABEL}=${MIRROR_CONTROLLER}`,
);
