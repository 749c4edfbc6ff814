-- A deleted persistent resource's cost outlives its row (issue 18): the delete writes what the
-- resource cost, from its placement to its deletion, here in the same statement, and the
-- project's costs keep showing it.
CREATE TABLE resource_costs_ended (
  uid                 bigint PRIMARY KEY,
  project_number      bigint NOT NULL REFERENCES projects(number),
  location            text NOT NULL,
  resource_id         text NOT NULL,
  consumption_model   text NOT NULL,
  hourly_price_micros bigint NOT NULL,  -- as it was last billed
  cost_micros         bigint NOT NULL,  -- the whole cost, up to deleted_at
  create_time         timestamptz NOT NULL,
  deleted_at          timestamptz NOT NULL
);
CREATE INDEX resource_costs_ended_by_project ON resource_costs_ended (project_number, create_time);
