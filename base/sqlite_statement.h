// SqliteStatement: one prepared SQLite statement that binds by position and finalises itself.
// The archive (its Archivist, drk report, the dashboard) and the gateway's task store query
// through it. Header-only: a target that includes it links SQLite::SQLite3.
//
// Ownership: the statement borrows its connection, which must outlive it.
// Thread-safety: as the connection's: one thread at a time.
// Errors: prepared() is false when SQLite refused the SQL (error() says why: an archive of an older
// run may lack a table or a column); step() returns SQLite's codes.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace drk {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const char* sql) : db_(db) {
    status_ = sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr);
  }
  ~SqliteStatement() { sqlite3_finalize(statement_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  bool prepared() const { return status_ == SQLITE_OK; }
  // SQLite's message for the last failure on this statement's connection.
  std::string error() const { return sqlite3_errmsg(db_); }

  SqliteStatement& text(const std::string& value) {
    sqlite3_bind_text(statement_, ++index_, value.c_str(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqliteStatement& integer(int64_t value) {
    sqlite3_bind_int64(statement_, ++index_, value);
    return *this;
  }
  SqliteStatement& real(double value) {
    sqlite3_bind_double(statement_, ++index_, value);
    return *this;
  }
  SqliteStatement& blob(const void* data, size_t size) {
    sqlite3_bind_blob(statement_, ++index_, data, static_cast<int>(size), SQLITE_TRANSIENT);
    return *this;
  }
  // SQLITE_ROW while rows remain, SQLITE_DONE at the end, an error code otherwise.
  int step() { return sqlite3_step(statement_); }
  std::string column_text(int column) const {
    const auto* text = sqlite3_column_text(statement_, column);
    return text ? std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(statement_, column)) : "";
  }
  int64_t column_integer(int column) const { return sqlite3_column_int64(statement_, column); }
  double column_real(int column) const { return sqlite3_column_double(statement_, column); }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
  int status_;
  int index_ = 0;
};

}  // namespace drk
