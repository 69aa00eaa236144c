// A small RAII wrapper over the HDF5 C API: owned handles, typed attributes, and append-only
// tables (1-D extendible compound datasets) described by column lists.
#pragma once

#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace fabricmap::results::h5 {

// An owned hid_t, closed with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      closer_ = o.closer_;
    }
    return *this;
  }
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// A number read from a file as T. A floating value no integral T can hold (a hostile file's inf,
// NaN or 1e300) gives `fallback` instead of undefined behaviour.
template <class T, class X>
T numberAs(X x, T fallback) {
  if constexpr (std::is_floating_point_v<X> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const bool fits = std::isfinite(x) && x >= static_cast<X>(std::numeric_limits<T>::lowest()) &&
                      x < static_cast<X>(std::numeric_limits<T>::max());
    return fits ? static_cast<T>(x) : fallback;
  } else {
    return static_cast<T>(x);
  }
}

// Silences HDF5's automatic error-stack printing; errors surface as exceptions with one message.
void silenceErrorStack();

bool isHdf5File(const std::string& path);
Handle createFile(const std::string& path);  // truncates
Handle openFile(const std::string& path, bool writable);
Handle openGroup(hid_t parent, const std::string& path);
Handle ensureGroup(hid_t parent, const std::string& path);  // creates missing levels
bool exists(hid_t parent, const std::string& path);
void flush(hid_t file);

// ---- attributes (scalar)
using Value = std::variant<std::int64_t, std::uint64_t, double, bool, std::string>;

void writeAttribute(hid_t object, const std::string& name, const Value& value);
std::optional<Value> readAttribute(hid_t object, const std::string& name);

// ---- tables
enum class ColumnType { kInt, kUInt, kFloat, kBool, kText };

struct ColumnSpec {
  std::string name;
  ColumnType type;
  std::string formerName = {};  // read when `name` is absent (a file of an older schema)
};

using Row = std::vector<Value>;  // one Value per column, in column order

// Creates (or truncates to empty) a table dataset at `path` with the given columns.
void createTable(hid_t file, const std::string& path, const std::vector<ColumnSpec>& columns);
// Appends rows to a table created with the same columns.
void appendRows(hid_t file, const std::string& path, const std::vector<ColumnSpec>& columns,
                const std::vector<Row>& rows);
// Whether `path` is a table (a compound dataset).
bool isTable(hid_t file, const std::string& path);
// Reads a table; columns missing in the file come back as the type's zero value. Absent table:
// no rows.
std::vector<Row> readRows(hid_t file, const std::string& path,
                          const std::vector<ColumnSpec>& columns);

// ---- dense arrays (matrices): float64 in the file, NaN where not measured
// Writes a rows x cols matrix or, with cols = 0, a vector of `rows`; replaces an existing one.
void writeArray(hid_t file, const std::string& path, const std::vector<float>& values, int rows,
                int cols);
// Reads a 1-D or 2-D float dataset; empty when absent. `rows`/`cols` receive the shape.
std::vector<float> readArray(hid_t file, const std::string& path, int& rows, int& cols);
// An n x n uint8 enum dataset with the given value names (0, 1, 2, ...).
void writeEnumArray(hid_t file, const std::string& path, const std::vector<std::uint8_t>& values,
                    int n, const std::vector<std::string>& names);
std::vector<std::uint8_t> readEnumArray(hid_t file, const std::string& path, int& n);
// A rows x cols matrix of short texts (UTF-8, variable length); replaces an existing one.
void writeTextArray(hid_t file, const std::string& path, const std::vector<std::string>& values, int rows,
                    int cols);
std::vector<std::string> readTextArray(hid_t file, const std::string& path, int& rows, int& cols);
// Attribute on a dataset or group by path.
void writeAttributeAt(hid_t file, const std::string& path, const std::string& name, const Value& value);
std::optional<Value> readAttributeAt(hid_t file, const std::string& path, const std::string& name);

}  // namespace fabricmap::results::h5
