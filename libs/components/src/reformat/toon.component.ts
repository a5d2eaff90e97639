// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const toonComponent = defineComponent({
  name: 'toon',
  kind: 'reformat',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('toon is not implemented yet');
  },
});
