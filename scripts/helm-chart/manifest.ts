/** A Kubernetes object of config/ as kustomize renders it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, unknown> };
  [field: string]: unknown;
}
