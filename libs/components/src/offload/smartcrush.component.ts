// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const smartcrushComponent = defineComponent({
  name: 'smartcrush',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('smartcrush is not implemented yet');
  },
});
