export const GATEWAY = Symbol('GATEWAY');
