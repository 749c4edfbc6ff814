-- Issue 33: a token that may scrape /metrics and nothing else (role 4, metrics-viewer), so
-- Prometheus never holds a fleet-admin token. Like a fleet-admin token it names no project.
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_project_check
  CHECK (project_number IS NOT NULL OR fleet_admin OR role = 4);
