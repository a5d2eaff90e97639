// PLACEHOLDER: replaced by the real component. Building it fails loudly.
import { defineComponent } from '../component';

export const failedRunComponent = defineComponent({
  name: 'failed_run',
  kind: 'offload',
  gates: [],
  options: () => ({}),
  create: () => {
    throw new Error('failed_run is not implemented yet');
  },
});
