#include "kernels/runtime/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "kernels/runtime/errors.h"

namespace weft {

std::string temporaryPathFor(const std::string& path) {
  return path + ".tmp";
}

void moveIntoPlace(const std::string& temporary, const std::string& path) {
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    const std::string reason = ec.message();
    std::filesystem::remove(temporary, ec);
    throw Error("cannot move " + temporary + " into place as " + path + ": " + reason);
  }
}

void writeFileAtomically(const std::string& path, const std::string& text,
                         const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const fs::path parent = fs::path(path).parent_path(); !parent.empty())
    fs::create_directories(parent, ec);
  const std::string tmp = temporaryPathFor(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error("cannot write " + what + " " + path + ": " + std::strerror(errno) +
                " (is the folder writable?)");
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    fs::remove(tmp, ec);  // no partial file left behind
    throw Error("writing " + what + " " + path + " failed (disk full?)");
  }
  moveIntoPlace(tmp, path);
}

}  // namespace weft
