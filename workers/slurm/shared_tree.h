#pragma once
// The shared tree (SlurmRuntimeOptions::shared_dir) as the server walks it. The cluster's jobs can
// write their job's folder and everything in it, so any name there may have been swapped for a
// symbolic link to a place the server (root, maybe) would then chown, write or read for the job.
// Every walk therefore starts at a root the server opened and checked (a real folder, its own),
// and takes one name at a time through descriptors, following no link: what is done to a folder
// or a file is done to the descriptor it was opened as, never again by its path.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/status.h"
#include "workers/files/unique_fd.h"

namespace trainyard::slurm {

// Whom the job folders are handed to (the Slurm user's uid and gid) when the server is root.
using FolderOwner = std::pair<uid_t, gid_t>;

// The tree's root `dir`, opened as a folder: refused when it is a symbolic link or not owned by
// the server's effective uid. The operator chose the path up to it, so that path is trusted.
StatusOr<files::UniqueFd> OpenTreeRoot(const std::filesystem::path& dir);

// The folder down `names` from the folder open at `dir`, one name at a time, following no link.
StatusOr<files::UniqueFd> OpenFolderUnder(int dir, const std::vector<std::string>& names);

// `name` made in the folder `dir` (0700, the server's) and opened: AlreadyExists when anything is
// there already, so a link or a folder someone else left is never taken for the new one.
StatusOr<files::UniqueFd> MakeNewFolderAt(int dir, const std::string& name);

// Hands the open folder `fd` to `owner` (when set) and makes it 0700.
Status MakePrivate(int fd, const std::optional<FolderOwner>& owner, const std::string& shown);

// Names under the root: {"jobs", "<job>", "attempt-<n>"}.
std::vector<std::string> AttemptPath(int64_t job_id, int attempt);

// A new attempt's folder and its job's, open.
struct AttemptFolders {
  files::UniqueFd job;
  files::UniqueFd attempt;
};
// Makes jobs/<job>/attempt-<n> under the root open at `root` (jobs/ and the job's folder when
// missing), all the server's. An attempt folder already there is refused, not reused: the job's
// folder is the Slurm user's from its first attempt on, so the name may be a link it planted.
StatusOr<AttemptFolders> MakeAttemptFolders(int root, int64_t job_id, int attempt);
// Undoes MakeAttemptFolders once the attempt is given up before its submit: removes `file_names`
// from the attempt's folder, then the folder (only while empty). Best effort.
void RemoveAttemptFolder(const AttemptFolders& folders, int attempt,
                         const std::vector<std::string>& file_names);

// The regular file `file`, a path below `root_dir` (the tree's root, checked as OpenTreeRoot
// does), with every folder on the way opened without following a link. For OutputTailer: a
// descriptor, or -1 with errno ENOENT (missing), ELOOP (a link on the way) or another.
int OpenRegularInTree(const std::filesystem::path& root_dir, const std::filesystem::path& file);

// Up to `max_bytes` of the regular file `name` in the folder `dir`; empty when it is missing, a
// link or not a regular file.
std::string ReadRegularAt(int dir, const std::string& name, size_t max_bytes = 64 * 1024);
// Whether the regular file `name` is in the folder `dir` (a link there is not).
bool IsRegularAt(int dir, const std::string& name);
// A new file `name` in the folder `dir` holding `text`: refused when anything is there already.
Status WriteNewFileAt(int dir, const std::string& name, std::string_view text);
// An empty regular file `name` in the folder `dir` (a marker, whose being there is what counts):
// made, or found there already; refused when something else has the name.
Status MarkAt(int dir, const std::string& name);

}  // namespace trainyard::slurm
