// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const summarizeComponent = defineComponent({
  name: 'summarize',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('summarize is not implemented yet');
  },
});
