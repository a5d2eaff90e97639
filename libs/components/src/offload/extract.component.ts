// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const extractComponent = defineComponent({
  name: 'extract',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('extract is not implemented yet');
  },
});
