// HDF5 wrapper (see h5.h). Every column occupies 8 bytes in memory (int64, uint64, double,
// char*; bools as an int8 enum padded to 8), so row layout is simple; files store the packed type.
#include "results/h5.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/error.h"

// Throws with the caller's file:line, so a failure names the HDF5 call that failed.
#define FM_H5_FAIL(what) throw FM_FAULT(std::string("HDF5: ") + (what))

namespace fabricmap::results::h5 {
namespace {

constexpr std::size_t kSlot = 8;

Handle typeHandle(hid_t t) { return Handle(t, H5Tclose); }

// h5py's convention for booleans: an int8 enum FALSE=0, TRUE=1 (read back as numpy bool).
Handle boolType() {
  Handle t = typeHandle(H5Tenum_create(H5T_NATIVE_INT8));
  std::int8_t v = 0;
  H5Tenum_insert(t.get(), "FALSE", &v);
  v = 1;
  H5Tenum_insert(t.get(), "TRUE", &v);
  return t;
}

Handle stringType() {
  Handle t = typeHandle(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

Handle scalarType(ColumnType type) {
  switch (type) {
    case ColumnType::kInt: return typeHandle(H5Tcopy(H5T_NATIVE_INT64));
    case ColumnType::kUInt: return typeHandle(H5Tcopy(H5T_NATIVE_UINT64));
    case ColumnType::kFloat: return typeHandle(H5Tcopy(H5T_NATIVE_DOUBLE));
    case ColumnType::kBool: return boolType();
    case ColumnType::kText: return stringType();
  }
  return {};
}

// In-memory compound type: column i at offset 8*i. `present` limits it to columns the file has.
Handle memoryType(const std::vector<ColumnSpec>& columns, const std::vector<bool>* present) {
  Handle t = typeHandle(H5Tcreate(H5T_COMPOUND, kSlot * columns.size()));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (present != nullptr && !(*present)[i]) continue;
    Handle member = scalarType(columns[i].type);
    H5Tinsert(t.get(), columns[i].name.c_str(), kSlot * i, member.get());
  }
  return t;
}

Value zeroOf(ColumnType type) {
  switch (type) {
    case ColumnType::kInt: return std::int64_t{0};
    case ColumnType::kUInt: return std::uint64_t{0};
    case ColumnType::kFloat: return 0.0;
    case ColumnType::kBool: return false;
    case ColumnType::kText: return std::string();
  }
  return std::int64_t{0};
}

template <class T>
T loadAs(const std::byte* slot) {
  T v;
  std::memcpy(&v, slot, sizeof v);
  return v;
}

// The value of one 8-byte slot of a row read with memoryType().
Value loadSlot(ColumnType type, const std::byte* slot) {
  switch (type) {
    case ColumnType::kInt: return loadAs<std::int64_t>(slot);
    case ColumnType::kUInt: return loadAs<std::uint64_t>(slot);
    case ColumnType::kFloat: return loadAs<double>(slot);
    case ColumnType::kBool: return loadAs<std::int8_t>(slot) != 0;
    case ColumnType::kText: {
      const char* p = loadAs<const char*>(slot);
      return std::string(p != nullptr ? p : "");
    }
  }
  return std::int64_t{0};
}

}  // namespace

void silenceErrorStack() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

bool isHdf5File(const std::string& path) { return H5Fis_hdf5(path.c_str()) > 0; }

Handle createFile(const std::string& path) {
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) FM_H5_FAIL("cannot create '" + path + "'");
  return Handle(f, H5Fclose);
}

Handle openFile(const std::string& path, bool writable) {
  hid_t f = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) FM_H5_FAIL("cannot open '" + path + "'");
  return Handle(f, H5Fclose);
}

Handle openGroup(hid_t parent, const std::string& path) {
  hid_t g = H5Gopen2(parent, path.c_str(), H5P_DEFAULT);
  if (g < 0) FM_H5_FAIL("no group '" + path + "'");
  return Handle(g, H5Gclose);
}

bool exists(hid_t parent, const std::string& path) {
  // H5Lexists must be asked level by level.
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t next = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, next);
    if (!prefix.empty() && prefix != "/" && H5Lexists(parent, prefix.c_str(), H5P_DEFAULT) <= 0) {
      return false;
    }
    if (next == std::string::npos) break;
    pos = next;
  }
  return true;
}

Handle ensureGroup(hid_t parent, const std::string& path) {
  std::size_t pos = 0;
  while (true) {
    std::size_t next = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, next);
    if (!prefix.empty() && prefix != "/" && H5Lexists(parent, prefix.c_str(), H5P_DEFAULT) <= 0) {
      hid_t g = H5Gcreate2(parent, prefix.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      if (g < 0) FM_H5_FAIL("cannot create group '" + prefix + "'");
      H5Gclose(g);
    }
    if (next == std::string::npos) break;
    pos = next;
  }
  return openGroup(parent, path);
}

void flush(hid_t file) {
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) FM_H5_FAIL("flush failed");
}

void writeAttribute(hid_t object, const std::string& name, const Value& value) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle type;
  const void* data = nullptr;
  const char* text = nullptr;
  std::int8_t flag = 0;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          type = scalarType(ColumnType::kInt);
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          type = scalarType(ColumnType::kUInt);
        } else if constexpr (std::is_same_v<T, double>) {
          type = scalarType(ColumnType::kFloat);
        } else if constexpr (std::is_same_v<T, bool>) {
          type = scalarType(ColumnType::kBool);
        } else {
          type = scalarType(ColumnType::kText);
        }
      },
      value);
  if (const auto* s = std::get_if<std::string>(&value)) {
    text = s->c_str();
    data = &text;
  } else if (const auto* b = std::get_if<bool>(&value)) {
    flag = *b ? 1 : 0;
    data = &flag;
  } else {
    data = std::visit([](const auto& v) -> const void* { return &v; }, value);
  }
  Handle attr(H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose);
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), data) < 0) {
    FM_H5_FAIL("cannot write attribute '" + name + "'");
  }
}

std::optional<Value> readAttribute(hid_t object, const std::string& name) {
  if (H5Aexists(object, name.c_str()) <= 0) return std::nullopt;
  Handle attr(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) FM_H5_FAIL("cannot open attribute " + name);
  // one value is read into one variable: an array here would be read past it
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  const hssize_t values = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (values != 1) {
    throw core::UsageError("attribute '" + name + "' holds " + (values < 0 ? std::string("unreadable") : std::to_string(values)) +
                           " values; fabricmap writes one");
  }
  Handle ftype(H5Aget_type(attr.get()), H5Tclose);
  switch (H5Tget_class(ftype.get())) {
    case H5T_STRING: {
      Handle mtype = stringType();
      if (H5Tis_variable_str(ftype.get()) > 0) {
        char* s = nullptr;
        if (H5Aread(attr.get(), mtype.get(), &s) < 0) FM_H5_FAIL("cannot read attribute " + name);
        std::string out = s != nullptr ? s : "";
        H5free_memory(s);
        return out;
      }
      const std::size_t n = H5Tget_size(ftype.get());
      std::string out(n, '\0');
      Handle fixed = typeHandle(H5Tcopy(ftype.get()));
      if (H5Aread(attr.get(), fixed.get(), out.data()) < 0) FM_H5_FAIL("cannot read attribute " + name);
      out.resize(std::strlen(out.c_str()));
      return out;
    }
    case H5T_ENUM: {
      std::int8_t v = 0;
      Handle mtype = boolType();
      if (H5Aread(attr.get(), mtype.get(), &v) < 0) FM_H5_FAIL("cannot read attribute " + name);
      return v != 0;
    }
    case H5T_FLOAT: {
      double v = 0;
      H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v);
      return v;
    }
    case H5T_INTEGER: {
      if (H5Tget_sign(ftype.get()) == H5T_SGN_NONE) {
        std::uint64_t v = 0;
        H5Aread(attr.get(), H5T_NATIVE_UINT64, &v);
        return v;
      }
      std::int64_t v = 0;
      H5Aread(attr.get(), H5T_NATIVE_INT64, &v);
      return v;
    }
    default:
      return std::nullopt;
  }
}

void createTable(hid_t file, const std::string& path, const std::vector<ColumnSpec>& columns) {
  if (const auto slash = path.rfind('/'); slash != std::string::npos && slash > 0) {
    ensureGroup(file, path.substr(0, slash));
  }
  if (exists(file, path)) H5Ldelete(file, path.c_str(), H5P_DEFAULT);
  Handle mtype = memoryType(columns, nullptr);
  Handle ftype = typeHandle(H5Tcopy(mtype.get()));
  H5Tpack(ftype.get());
  const hsize_t dims[1] = {0};
  const hsize_t maxdims[1] = {H5S_UNLIMITED};
  Handle space(H5Screate_simple(1, dims, maxdims), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  const hsize_t chunk[1] = {64};
  H5Pset_chunk(dcpl.get(), 1, chunk);
  Handle dset(H5Dcreate2(file, path.c_str(), ftype.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                         H5P_DEFAULT),
              H5Dclose);
  if (!dset.valid()) FM_H5_FAIL("cannot create table '" + path + "'");
}

void appendRows(hid_t file, const std::string& path, const std::vector<ColumnSpec>& columns,
                const std::vector<Row>& rows) {
  if (rows.empty()) return;
  Handle dset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) FM_H5_FAIL("no table '" + path + "'");
  Handle fspace(H5Dget_space(dset.get()), H5Sclose);
  hsize_t old = 0;
  H5Sget_simple_extent_dims(fspace.get(), &old, nullptr);
  const hsize_t add = rows.size();
  const hsize_t total = old + add;
  if (H5Dset_extent(dset.get(), &total) < 0) FM_H5_FAIL("cannot extend '" + path + "'");
  fspace = Handle(H5Dget_space(dset.get()), H5Sclose);
  H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &old, nullptr, &add, nullptr);
  Handle mspace(H5Screate_simple(1, &add, nullptr), H5Sclose);

  std::vector<std::byte> buf(kSlot * columns.size() * rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != columns.size()) FM_H5_FAIL("row width mismatch in '" + path + "'");
    std::byte* slot = buf.data() + r * kSlot * columns.size();
    for (std::size_t c = 0; c < columns.size(); ++c, slot += kSlot) {
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
              const char* p = v.c_str();  // rows outlive the write
              std::memcpy(slot, &p, sizeof p);
            } else if constexpr (std::is_same_v<T, bool>) {
              const std::int8_t b = v ? 1 : 0;
              std::memcpy(slot, &b, sizeof b);
            } else {
              std::memcpy(slot, &v, sizeof v);
            }
          },
          rows[r][c]);
    }
  }
  Handle mtype = memoryType(columns, nullptr);
  if (H5Dwrite(dset.get(), mtype.get(), mspace.get(), fspace.get(), H5P_DEFAULT, buf.data()) < 0) {
    FM_H5_FAIL("cannot write to '" + path + "'");
  }
}

bool isTable(hid_t file, const std::string& path) {
  if (!exists(file, path)) return false;
  Handle dset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) return false;
  Handle type(H5Dget_type(dset.get()), H5Tclose);
  return type.valid() && H5Tget_class(type.get()) == H5T_COMPOUND;
}

namespace {

// Whether a table's member of type `member` reads into a column of `type` the way fabricmap writes
// one: numbers from integers or floats, a bool from fabricmap's enum, text from variable-length
// strings. HDF5 leaks the conversion it set up for a whole row when a member cannot be converted,
// so such a table is refused before it is read.
bool readableAs(ColumnType type, hid_t member) {
  const H5T_class_t cls = H5Tget_class(member);
  switch (type) {
    case ColumnType::kInt:
    case ColumnType::kUInt:
    case ColumnType::kFloat: return cls == H5T_INTEGER || cls == H5T_FLOAT;
    case ColumnType::kBool: return cls == H5T_ENUM && H5Tequal(member, boolType().get()) > 0;
    case ColumnType::kText: return cls == H5T_STRING && H5Tis_variable_str(member) > 0;
  }
  return false;
}

// Frees the variable-length strings H5Dread allocated in a buffer (zeroed before the read), however
// the read and what follows it end: a read that fails half way has allocated some.
struct VlenStrings {
  hid_t type;
  hid_t space;
  void* buffer;
  VlenStrings(hid_t t, hid_t s, void* b) : type(t), space(s), buffer(b) {}
  VlenStrings(const VlenStrings&) = delete;
  VlenStrings& operator=(const VlenStrings&) = delete;
  ~VlenStrings() { H5Dvlen_reclaim(type, space, H5P_DEFAULT, buffer); }
};

}  // namespace

std::vector<Row> readRows(hid_t file, const std::string& path,
                          const std::vector<ColumnSpec>& columns) {
  std::vector<Row> rows;
  if (!exists(file, path)) return rows;
  Handle dset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) FM_H5_FAIL("cannot open table '" + path + "'");
  Handle ftype(H5Dget_type(dset.get()), H5Tclose);
  if (H5Tget_class(ftype.get()) != H5T_COMPOUND) FM_H5_FAIL("'" + path + "' is not a table");
  // each column under its name, or under its former name in a file of an older schema
  std::vector<ColumnSpec> inFile = columns;
  std::vector<bool> present(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    present[c] = H5Tget_member_index(ftype.get(), columns[c].name.c_str()) >= 0;
    if (!present[c] && !columns[c].formerName.empty() &&
        H5Tget_member_index(ftype.get(), columns[c].formerName.c_str()) >= 0) {
      inFile[c].name = columns[c].formerName;
      present[c] = true;
    }
  }
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (!present[c]) continue;
    const int at = H5Tget_member_index(ftype.get(), inFile[c].name.c_str());
    Handle member(H5Tget_member_type(ftype.get(), static_cast<unsigned>(at)), H5Tclose);
    if (!member.valid() || !readableAs(columns[c].type, member.get())) {
      FM_H5_FAIL("table '" + path + "' column '" + inFile[c].name + "' is not of the type fabricmap writes");
    }
  }
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  if (n == 0) return rows;
  if (std::none_of(present.begin(), present.end(), [](bool p) { return p; })) {
    // none of the columns: every row is defaults (HDF5 leaks a conversion with no member to convert)
    Row defaults;
    for (const ColumnSpec& c : columns) defaults.push_back(zeroOf(c.type));
    rows.assign(n, defaults);
    return rows;
  }
  Handle mtype = memoryType(inFile, &present);
  std::vector<std::byte> buf(kSlot * columns.size() * n);
  const VlenStrings strings{mtype.get(), space.get(), buf.data()};
  if (H5Dread(dset.get(), mtype.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0) {
    FM_H5_FAIL("cannot read table '" + path + "'");
  }
  rows.reserve(n);
  for (hsize_t r = 0; r < n; ++r) {
    Row row;
    row.reserve(columns.size());
    const std::byte* slot = buf.data() + r * kSlot * columns.size();
    for (std::size_t c = 0; c < columns.size(); ++c, slot += kSlot) {
      if (!present[c]) {
        row.push_back(zeroOf(columns[c].type));
        continue;
      }
      row.push_back(loadSlot(columns[c].type, slot));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

void replaceDataset(hid_t file, const std::string& path) {
  if (const auto slash = path.rfind('/'); slash != std::string::npos && slash > 0) {
    ensureGroup(file, path.substr(0, slash));
  }
  if (exists(file, path)) H5Ldelete(file, path.c_str(), H5P_DEFAULT);
}

Handle createSimple(hid_t file, const std::string& path, hid_t ftype, int rows, int cols) {
  replaceDataset(file, path);
  const hsize_t dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
  Handle space(H5Screate_simple(cols == 0 ? 1 : 2, dims, nullptr), H5Sclose);
  Handle dset(H5Dcreate2(file, path.c_str(), ftype, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
  if (!dset.valid()) FM_H5_FAIL("cannot create '" + path + "'");
  return dset;
}

}  // namespace

void writeArray(hid_t file, const std::string& path, const std::vector<float>& values, int rows,
                int cols) {
  Handle dset = createSimple(file, path, H5T_IEEE_F64LE, rows, cols);
  if (!values.empty() &&
      H5Dwrite(dset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    FM_H5_FAIL("cannot write '" + path + "'");
  }
}

namespace {

// Opens a 1-D or 2-D dataset and reports its shape (a vector is rows x 1).
Handle openArray(hid_t file, const std::string& path, int& rows, int& cols) {
  Handle dset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  hsize_t dims[2] = {0, 1};
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1 || rank > 2) FM_H5_FAIL("'" + path + "' is not a vector or matrix");
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  rows = static_cast<int>(dims[0]);
  cols = rank == 2 ? static_cast<int>(dims[1]) : 1;
  return dset;
}

}  // namespace

std::vector<float> readArray(hid_t file, const std::string& path, int& rows, int& cols) {
  rows = cols = 0;
  if (!exists(file, path)) return {};
  Handle dset = openArray(file, path, rows, cols);
  std::vector<float> values(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  if (!values.empty() &&
      H5Dread(dset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    FM_H5_FAIL("cannot read '" + path + "'");
  }
  return values;
}

void writeTextArray(hid_t file, const std::string& path, const std::vector<std::string>& values, int rows,
                    int cols) {
  Handle type = stringType();
  Handle dset = createSimple(file, path, type.get(), rows, cols);
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const auto& v : values) pointers.push_back(v.c_str());
  if (!pointers.empty() &&
      H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0) {
    FM_H5_FAIL("cannot write '" + path + "'");
  }
}

std::vector<std::string> readTextArray(hid_t file, const std::string& path, int& rows, int& cols) {
  rows = cols = 0;
  if (!exists(file, path)) return {};
  Handle dset = openArray(file, path, rows, cols);
  std::vector<char*> pointers(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), nullptr);
  Handle type = stringType();
  if (pointers.empty()) return {};
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  const VlenStrings strings{type.get(), space.get(), pointers.data()};
  if (H5Dread(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0) {
    FM_H5_FAIL("cannot read '" + path + "'");
  }
  std::vector<std::string> values;
  values.reserve(pointers.size());
  for (char* p : pointers) values.emplace_back(p != nullptr ? p : "");
  return values;
}

void writeEnumArray(hid_t file, const std::string& path, const std::vector<std::uint8_t>& values,
                    int n, const std::vector<std::string>& names) {
  Handle type(H5Tenum_create(H5T_NATIVE_UINT8), H5Tclose);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto v = static_cast<std::uint8_t>(i);
    H5Tenum_insert(type.get(), names[i].c_str(), &v);
  }
  Handle dset = createSimple(file, path, type.get(), n, n);
  if (!values.empty() && H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    FM_H5_FAIL("cannot write '" + path + "'");
  }
}

std::vector<std::uint8_t> readEnumArray(hid_t file, const std::string& path, int& n) {
  n = 0;
  if (!exists(file, path)) return {};
  Handle dset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  n = static_cast<int>(dims[0]);
  std::vector<std::uint8_t> values(static_cast<std::size_t>(dims[0] * dims[1]));
  // the dataset's own type: an enum over uint8, so its raw values are the class indices
  Handle ftype(H5Dget_type(dset.get()), H5Tclose);
  if (H5Tget_size(ftype.get()) != 1) FM_H5_FAIL("'" + path + "' is not a uint8 enum");
  if (!values.empty() && H5Dread(dset.get(), ftype.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    FM_H5_FAIL("cannot read '" + path + "'");
  }
  return values;
}

void writeAttributeAt(hid_t file, const std::string& path, const std::string& name, const Value& value) {
  Handle obj(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
  if (!obj.valid()) FM_H5_FAIL("no object '" + path + "'");
  writeAttribute(obj.get(), name, value);
}

std::optional<Value> readAttributeAt(hid_t file, const std::string& path, const std::string& name) {
  if (!exists(file, path)) return std::nullopt;
  Handle obj(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
  return readAttribute(obj.get(), name);
}

}  // namespace fabricmap::results::h5
