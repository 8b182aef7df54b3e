/*
 * The reference for issue #18's "first XLSX keeps ≥ 2×": libxlsxwriter (C, constant_memory
 * mode, the fastest way it writes) reading a list's rows from the SQLite file and writing the
 * cells the service's legacy XLSX holds: a bold header row, then per item offer_id and name as
 * text, price and old_price as `0.00` numbers, currency as text, available as a boolean,
 * quantity as a `0` number, url as text; an absent value is an empty cell.
 *
 * Built by bench/figures/first-json-xml.ts (needs Debian's libxlsxwriter-dev and
 * libsqlite3-dev):  cc -O2 -o xlsx-reference xlsx-reference.c -lxlsxwriter -lsqlite3
 * Run:              xlsx-reference DB_FILE LIST_ID OUT.xlsx
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <xlsxwriter.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DB_FILE LIST_ID OUT.xlsx\n", argv[0]);
    return 2;
  }
  sqlite3 *db;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    fprintf(stderr, "cannot open %s: %s\n", argv[1], sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_stmt *rows;
  const char *sql = "SELECT offer_id, name, price, old_price, currency, available, quantity, url"
                    " FROM price_items WHERE price_list_id = ? ORDER BY seq";
  if (sqlite3_prepare_v2(db, sql, -1, &rows, NULL) != SQLITE_OK) {
    fprintf(stderr, "cannot read the rows: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_bind_int64(rows, 1, atoll(argv[2]));

  lxw_workbook_options options = {.constant_memory = LXW_TRUE, .tmpdir = NULL};
  lxw_workbook *workbook = workbook_new_opt(argv[3], &options);
  lxw_worksheet *sheet = workbook_add_worksheet(workbook, "Prices");
  lxw_format *header = workbook_add_format(workbook);
  format_set_bold(header);
  lxw_format *money = workbook_add_format(workbook);
  format_set_num_format(money, "0.00");
  lxw_format *integer = workbook_add_format(workbook);
  format_set_num_format(integer, "0");

  const char *titles[] = {"offer_id", "name", "price", "old_price", "currency", "available", "quantity", "url"};
  for (int c = 0; c < 8; c++) worksheet_write_string(sheet, 0, c, titles[c], header);
  lxw_row_t row = 1;
  while (sqlite3_step(rows) == SQLITE_ROW) {
    worksheet_write_string(sheet, row, 0, (const char *)sqlite3_column_text(rows, 0), NULL);
    worksheet_write_string(sheet, row, 1, (const char *)sqlite3_column_text(rows, 1), NULL);
    worksheet_write_number(sheet, row, 2, sqlite3_column_int64(rows, 2) / 100.0, money);
    if (sqlite3_column_type(rows, 3) != SQLITE_NULL) worksheet_write_number(sheet, row, 3, sqlite3_column_int64(rows, 3) / 100.0, money);
    worksheet_write_string(sheet, row, 4, (const char *)sqlite3_column_text(rows, 4), NULL);
    worksheet_write_boolean(sheet, row, 5, sqlite3_column_int(rows, 5), NULL);
    if (sqlite3_column_type(rows, 6) != SQLITE_NULL) worksheet_write_number(sheet, row, 6, (double)sqlite3_column_int64(rows, 6), integer);
    if (sqlite3_column_type(rows, 7) != SQLITE_NULL) worksheet_write_string(sheet, row, 7, (const char *)sqlite3_column_text(rows, 7), NULL);
    row++;
  }
  sqlite3_finalize(rows);
  sqlite3_close(db);
  lxw_error error = workbook_close(workbook);
  if (error != LXW_NO_ERROR) {
    fprintf(stderr, "cannot write %s: %s\n", argv[3], lxw_strerror(error));
    return 1;
  }
  return 0;
}
