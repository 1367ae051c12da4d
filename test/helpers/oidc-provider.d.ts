// The part of oidc-provider (which ships no types) that test/helpers/oidc.ts uses.
declare module "oidc-provider" {
  import type { RequestListener } from "node:http";

  interface Grant {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  /** What the provider hands its hooks of a request in flight. */
  export interface ProviderContext {
    oidc: {
      provider: { Grant: new (init: { clientId: string; accountId: string }) => Grant };
      client?: { clientId: string };
      session?: { accountId?: string };
      params?: Record<string, unknown>;
    };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): RequestListener;
  }
}
