// node-localstorage@3 ships no types: the part the store uses.
declare module 'node-localstorage' {
  export class LocalStorage {
    constructor(location: string, quota?: number);
  }
}
