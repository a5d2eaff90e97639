// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const collapseComponent = defineComponent({
  name: 'collapse',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('collapse is not implemented yet');
  },
});
