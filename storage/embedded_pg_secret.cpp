#include "storage/embedded_pg_secret.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "services/hex.h"

namespace trainyard::embedded_pg {
namespace {

constexpr std::string_view kPrefix = "*:*:*:postgres:";

std::string ReadSmall(int fd) {
  std::string text(4096, '\0');
  const ssize_t n = ::read(fd, text.data(), text.size());
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

// The words of a pg_hba.conf line, comments dropped.
std::vector<std::string> Words(std::string_view line) {
  if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::istringstream in{std::string(line)};
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// "local DB USER METHOD" or "host DB USER ADDR [MASK] METHOD": the method is the first word after
// the address fields; options may follow it.
size_t MethodIndex(const std::vector<std::string>& words) {
  if (words.empty()) return std::string::npos;
  if (words[0] == "local") return words.size() > 3 ? 3 : std::string::npos;
  const size_t at = words.size() > 4 && words[3].find('/') == std::string::npos &&
                            words[4].find('.') != std::string::npos
                        ? 5
                        : 4;
  return words.size() > at ? at : std::string::npos;
}

}  // namespace

StatusOr<std::string> EnsurePassFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) return Internal("no random bytes for a password");
    const std::string line = std::string(kPrefix) +
                             HexOf(std::string_view(reinterpret_cast<char*>(bytes), sizeof bytes)) +
                             "\n";
    const int out =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) return Internal("cannot create the database password file " + path);
    const bool written =
        ::write(out, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    const bool synced = ::fsync(out) == 0;
    ::close(out);
    if (!written || !synced) return Internal("cannot write the database password file " + path);
    fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) return Internal("cannot read the database password file " + path);
  struct stat st {};
  const bool private_file = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                            st.st_uid == ::geteuid() && (st.st_mode & 077) == 0;
  std::string text = ReadSmall(fd);
  ::close(fd);
  if (!private_file) {
    return FailedPrecondition("the database password file " + path +
                              " must be a regular file of this user's, mode 0600");
  }
  if (!text.starts_with(kPrefix)) return FailedPrecondition(path + " is not a password file");
  std::string password = text.substr(kPrefix.size());
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) return FailedPrecondition(path + " holds no password");
  return password;
}

bool HbaTrusts(std::string_view hba) {
  std::istringstream in{std::string(hba)};
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> words = Words(line);
    const size_t at = MethodIndex(words);
    if (at != std::string::npos && words[at] == "trust") return true;
  }
  return false;
}

std::string HbaWithoutTrust(std::string_view hba) {
  std::istringstream in{std::string(hba)};
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> words = Words(line);
    const size_t at = MethodIndex(words);
    if (at != std::string::npos && words[at] == "trust") {
      // Rewritten from its words: the layout of a generated line is not worth keeping.
      std::string rewritten;
      for (size_t i = 0; i < words.size(); ++i) {
        rewritten += (i ? " " : "") + (i == at ? std::string("scram-sha-256") : words[i]);
      }
      line = rewritten;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace trainyard::embedded_pg
