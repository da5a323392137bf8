// What the manager starts once its caches have synced and stops on shutdown, as
// controller-runtime's manager.Runnable: every controller is one, so none
// depends on another's start order. The same shape as the dns-server's
// components (runtime/manager.ts): one Runnable for both programs.
export type { Runnable } from '../../runtime/manager.js';
