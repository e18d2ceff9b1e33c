/** Circuit breakers: they live in the contract (`adapters/contract/breaker.ts`, a module's factory gets the board); importable from here as before. */
export * from '../contract/breaker';
