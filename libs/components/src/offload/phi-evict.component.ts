// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const phiEvictComponent = defineComponent({
  name: 'phi_evict',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('phi_evict is not implemented yet');
  },
});
