#pragma once
// Operation statements shared by the stores that record an operation with the change it
// describes (storage/pg_resource_store.cpp) and by the operations store.
#include "storage/row_codec.h"

namespace trainyard::storage {

#define TY_OPERATION_COLUMNS                                                    \
  "id, project_number, location, parent, metadata_type, done, response::text, " \
  "error_code, error_message, " TY_MICROS("create_time") ", " TY_MICROS(        \
      "update_time") ", cancel_requested, progress_message"

// $1 id, $2 project number, $3 location, $4 parent, $5 metadata type, $6 done, $7 response,
// $8 time, $9 progress message.
inline constexpr const char* kInsertOperation =
    "INSERT INTO operations (id, project_number, location, parent, metadata_type, done, response, "
    "create_time, update_time, progress_message) VALUES ($1::bigint, $2::bigint, $3, $4, $5, "
    "$6::boolean, $7::jsonb, " TY_TS("$8") ", " TY_TS("$8") ", $9)";

// Finishes an unfinished operation ($1) with a response ($2) or an error ($3 code, $4 message)
// at $5; a finished one stays as it is.
inline constexpr const char* kFinishOperation =
    "UPDATE operations SET done = true, response = $2::jsonb, error_code = $3::integer, "
    "error_message = $4, progress_message = '', update_time = " TY_TS("$5") " "
    "WHERE id = $1::bigint AND NOT done";

// One row of TY_OPERATION_COLUMNS.
Operation DecodeOperationRow(const pg::Result& r, int row);

}  // namespace trainyard::storage
