// Links that download a session's recordings (servers/lib/recordings.ts) under the hub's own
// address: `/recordings/<token>/<id>.<ending>`. The token is the only credential, made and kept
// like a preview's (./token.ts, ./store.ts): unguessable, bound to the tenant, the session and the
// one recording, expiring, and ended with the session or the hub. One live link per recording: a
// listing asked for again hands out the same URL.
import { RECORDING_FORMATS, recordingFileName, type RecordingFormat, type RecordingKind } from "../../servers/lib/recording-names.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";
import type { Clock } from "../protocol/clock.js";
import { TokenStore, type Grant, type Lookup } from "./store.js";
import { newToken, secretOf, TOKEN } from "./token.js";

export interface RecordingGrant extends Grant {
  /** The recording's id, checked (servers/lib/recording-names.ts RECORDING_ID): the hub builds its path from it. */
  id: string;
  kind: RecordingKind;
  format: RecordingFormat;
  /** The tenant's workspace, and the uid its recordings must belong to. */
  workspace: string;
  uid: number;
}

export type RecordingRequest = Omit<RecordingGrant, "token" | "createdAt" | "expiresAt">;

const ENDINGS = Object.values(RECORDING_FORMATS)
  .map((e) => e.replace(".", "\\."))
  .join("|");
const PATH = new RegExp(`^/recordings/(${TOKEN})/[a-z0-9-]{1,64}(?:${ENDINGS})$`);

/** The token of a path `/recordings/<token>/<file>`. */
export function tokenOfRecordingPath(pathname: string): string | undefined {
  return PATH.exec(pathname)?.[1];
}

export class RecordingLinks {
  private readonly store: TokenStore<RecordingGrant>;
  /** The live token of each recording, by session and id. */
  private readonly byRecording = new Map<string, string>();

  constructor(
    private readonly ttlSeconds: number,
    private readonly replica: string | undefined,
    /** The address the links are made under (hub/previews/previews.ts baseUrl). */
    private readonly base: (requestBase?: string) => URL,
    /** Where a live token is known, so nothing the hub writes down shows it. */
    private readonly secrets: MintedSecrets,
    private readonly clock: Clock,
  ) {
    this.store = new TokenStore<RecordingGrant>((grant) => this.ended(grant), clock);
  }

  /** The URL that downloads a recording, and when it stops working. */
  link(request: RecordingRequest, requestBase?: string): { url: string; expiresAt: Date } {
    const key = `${request.session}\0${request.id}`;
    const known = this.byRecording.get(key);
    const found = known ? this.store.lookup(known) : undefined;
    const grant = found && "preview" in found ? found.preview : this.mint(request, key);
    const base = this.base(requestBase);
    const path = base.pathname.replace(/\/$/, "");
    return { url: `${base.origin}${path}/recordings/${grant.token}/${recordingFileName(grant.id, grant.format)}`, expiresAt: grant.expiresAt };
  }

  private mint(request: RecordingRequest, key: string): RecordingGrant {
    const now = this.clock.now();
    const grant: RecordingGrant = { ...request, token: newToken(this.replica), createdAt: new Date(now), expiresAt: new Date(now + this.ttlSeconds * 1000) };
    this.secrets.remember(grant.token, secretOf(grant.token));
    this.byRecording.set(key, grant.token);
    this.store.add(grant);
    return grant;
  }

  lookup(token: string): Lookup<RecordingGrant> {
    return this.store.lookup(token);
  }

  endSession(session: string): void {
    this.store.endAll({ session }, "session ended");
  }

  stop(): void {
    this.store.endAll({}, "hub stopped");
  }

  private ended(grant: RecordingGrant): void {
    this.secrets.forget(grant.token);
    const key = `${grant.session}\0${grant.id}`;
    if (this.byRecording.get(key) === grant.token) this.byRecording.delete(key);
  }
}
