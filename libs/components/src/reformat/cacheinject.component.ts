// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const cacheinjectComponent = defineComponent({
  name: 'cacheinject',
  kind: 'reformat',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('cacheinject is not implemented yet');
  },
});
