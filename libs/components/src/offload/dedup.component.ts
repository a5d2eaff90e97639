// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const dedupComponent = defineComponent({
  name: 'dedup',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('dedup is not implemented yet');
  },
});
