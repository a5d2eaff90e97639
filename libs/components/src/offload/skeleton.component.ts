// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const skeletonComponent = defineComponent({
  name: 'skeleton',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('skeleton is not implemented yet');
  },
});
