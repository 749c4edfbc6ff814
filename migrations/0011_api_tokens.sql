-- Bearer tokens (issue 19). Only a keyed hash of each secret is kept: HMAC-SHA256 under the
-- installation's key, which lives here so every process on this database checks tokens alike.
-- Hashes and key are hex text.
CREATE TABLE token_hash_key (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  key_hex   text NOT NULL
);

CREATE TABLE api_tokens (
  id             bigserial PRIMARY KEY,
  project_number bigint REFERENCES projects(number),  -- NULL: a fleet-admin token of no project
  role           smallint NOT NULL,                    -- 1 viewer, 2 editor, 3 admin
  fleet_admin    boolean NOT NULL DEFAULT false,
  description    text NOT NULL DEFAULT '',
  secret_hash    text NOT NULL,
  create_time    timestamptz NOT NULL,
  expire_time    timestamptz,
  revoke_time    timestamptz,
  CHECK (project_number IS NOT NULL OR fleet_admin)
);
