// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const formatComponent = defineComponent({
  name: 'format',
  kind: 'reformat',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('format is not implemented yet');
  },
});
