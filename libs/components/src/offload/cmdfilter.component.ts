// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const cmdfilterComponent = defineComponent({
  name: 'cmdfilter',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('cmdfilter is not implemented yet');
  },
});
