import BookpipeTesting
import Foundation
import Testing

/// How a person would read one export with Python's `csv` module: the independent reader the
/// real-export tests compare bookpipe with.
struct ReferenceDialect: Sendable, Codable {
    /// The field delimiter.
    var delimiter = ","
    /// True for files without CSV quoting (LibraryThing's TSV: `csv.QUOTE_NONE`).
    var quoteNone = false
    /// True for editor-aligned files: `skipinitialspace=True`, then every cell trimmed.
    var padded = false
    /// True when the header line also holds the first row (its line break was lost): the header
    /// is as wide as the second row, and the trailing digits of its last cell start the first row.
    var mergedHeader = false
}

/// Which columns hold the values compared, by header name.
struct ReferenceColumns: Sendable, Codable {
    var title: String
    /// Author columns in order, with the separator of a column holding several names.
    var authors: [Author] = []
    /// Columns holding ISBNs, in order.
    var isbns: [String] = []

    struct Author: Sendable, Codable {
        var column: String
        var separator: String?
    }
}

/// One row as the reference reads it.
struct ReferenceRow: Sendable, Codable {
    var fields: [String]
    var title: String?
    var authors: [String]?
    /// The ISBN-13 a person takes from the row: the first checksum-valid ISBN-13 written in an
    /// ISBN column, else the first valid ISBN-10 (a spreadsheet's lost leading zeros put back)
    /// converted, never a 10-digit cut of the row's ISBN-13.
    var isbn13: String?
}

/// What the reference read from one file.
struct ReferenceTable: Sendable, Codable {
    var header: [String]
    var rows: [ReferenceRow]
}

/// Runs Python's `csv` module on a file (as a subprocess) and decodes its JSON.
enum ReferenceCSVReader {
    /// The Python program: argument 1 is a JSON object with `path`, the dialect and the columns.
    ///
    /// Bytes are read as Latin-1 so that the csv module sees every byte; each field is then decoded
    /// as UTF-8, or as Windows-1252 when it is not valid UTF-8 (what bookpipe promises). A UTF-8 BOM
    /// is dropped; a UTF-16 file (with BOM) is decoded first.
    static let program = #"""
        import csv, decimal, io, json, re, sys

        spec = json.loads(sys.argv[1])
        data = open(spec['path'], 'rb').read()
        if data.startswith(b'\xef\xbb\xbf'):
            data = data[3:]
        elif data.startswith(b'\xff\xfe') or data.startswith(b'\xfe\xff'):
            data = data.decode('utf-16').encode('utf-8')

        def decode(cell):
            raw = cell.encode('latin-1')
            try:
                return raw.decode('utf-8')
            except UnicodeDecodeError:
                return raw.decode('cp1252', errors='replace')

        options = {'delimiter': spec.get('delimiter', ',')}
        if spec.get('quoteNone'):
            options['quoting'] = csv.QUOTE_NONE
        if spec.get('padded'):
            options['skipinitialspace'] = True
        rows = [[decode(c) for c in row]
                for row in csv.reader(io.StringIO(data.decode('latin-1'), newline=''), **options)]
        rows = [row for row in rows if any(c.strip() for c in row)]
        if spec.get('padded'):
            rows = [[c.strip() for c in row] for row in rows]
        header, body = (rows[0], rows[1:]) if rows else ([], [])
        if spec.get('mergedHeader') and body:
            width = len(body[0])
            glued = re.match(r'^(.*?)(\d+)$', header[width - 1])
            first = [glued.group(2)] + header[width:]
            header = header[:width - 1] + [glued.group(1)]
            body = [first] + body

        def valid10(d):
            if not re.fullmatch(r'\d{9}[\dX]', d):
                return False
            return sum((10 - i) * (10 if c == 'X' else int(c)) for i, c in enumerate(d)) % 11 == 0

        def valid13(d):
            if not re.fullmatch(r'97[89]\d{10}', d):
                return False
            return (10 - sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(d[:12])) % 10) % 10 == int(d[12])

        def to13(d):
            base = '978' + d[:9]
            return base + str((10 - sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(base)) % 10) % 10)

        def isbn13(cells):
            tens, thirteens = [], []
            for cell in cells:
                for piece in re.split(r'[,;|]', cell):
                    piece = re.sub(r'[\s\-="\'\[\]()]', '', piece).upper()
                    scientific = re.fullmatch(r'\d\.(\d+)E\+(\d+)', piece)
                    if scientific:
                        # Only when every digit is still there (a rounded one is lost).
                        if len(scientific.group(1)) != int(scientific.group(2)):
                            continue
                        piece = str(int(decimal.Decimal(piece)))
                    if len(piece) == 13 and valid13(piece):
                        thirteens.append(piece)
                    elif 7 <= len(piece) <= 10 and valid10(piece.zfill(10)):
                        tens.append(piece.zfill(10))
            tens = [t for t in tens if not any(t == s[:10] for s in thirteens)]
            if thirteens:
                return thirteens[0]
            return to13(tens[0]) if tens else None

        columns = spec.get('columns')
        out = []
        for row in body:
            cell = lambda name: row[header.index(name)].strip() if header.index(name) < len(row) else ''
            item = {'fields': row}
            if columns:
                item['title'] = cell(columns['title'])
                authors = []
                for author in columns['authors']:
                    value = cell(author['column'])
                    parts = value.split(author['separator']) if author.get('separator') else [value]
                    authors += [p.strip() for p in parts if p.strip()]
                item['authors'] = authors
                item['isbn13'] = isbn13([cell(name) for name in columns['isbns']])
            out.append(item)
        print(json.dumps({'header': header, 'rows': out}, ensure_ascii=False))
        """#

    private struct Request: Encodable {
        var path: String
        var delimiter: String
        var quoteNone: Bool
        var padded: Bool
        var mergedHeader: Bool
        var columns: ReferenceColumns?
    }

    /// Reads `path` with Python.
    /// - Throws: when Python cannot be started, fails, or prints something that is not the table.
    static func read(_ path: String, dialect: ReferenceDialect, columns: ReferenceColumns?) throws -> ReferenceTable {
        let request = Request(
            path: path, delimiter: dialect.delimiter, quoteNone: dialect.quoteNone, padded: dialect.padded,
            mergedHeader: dialect.mergedHeader, columns: columns)
        let argument = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", program, argument]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReferenceError(message: "python3 failed on \(path): \(errorText)")
        }
        return try JSONDecoder().decode(ReferenceTable.self, from: data)
    }

    struct ReferenceError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
