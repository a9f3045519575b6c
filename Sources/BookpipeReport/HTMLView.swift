import BookpipeCore
import BookpipeLibrary
import Foundation

/// The values the HTML template renders: text and numbers only (the template escapes them all),
/// chart geometry computed here.
enum HTMLView {
    /// Records (ids and file:line) shown per finding in the page; the JSON and CSV list them all.
    static let rowsPerFinding = 12

    static func make(_ report: QualityReport) -> [String: Any] {
        let rows = report.rows
        let status = rows.byStatus
        func percent(_ part: Int, _ whole: Int) -> String {
            whole == 0 ? "–" : String(format: "%.1f%%", Double(part) * 100 / Double(whole))
        }
        // Headline tiles: each links to the section that lists its rows, shows the change since
        // the saved report compared with (marked when worse) and its trend over the saved reports.
        let headline = report.headline
        let sections: [String: String] = [
            "records": "#files", "matched": "#code-match.not-found", "errors": "#findings", "warnings": "#findings",
            "duplicateBooks": "#code-duplicate.book", "invalidISBN": "#validity", "isbn13Filled": "#missing-isbn",
            "coverFilled": "#missing-cover", "reviewWaiting": "#code-review.waiting", "failed": "#code-lookup.failed",
            "rejected": "#code-row.rejected",
        ]
        let presentSections = Set(report.findings.byCode.map { "#" + $0.section })
            .union(["#files", "#findings", "#validity", "#checks"]).union(report.completeness.map { "#missing-" + $0.field })
        let kpis: [[String: Any]] = HeadlineComparison.figures.map { figure in
            let value = figure.value(headline)
            var tile: [String: Any] = [
                "label": figure.label,
                "value": figure.isShare ? String(format: "%.1f%%", value) : CheckFile.format(value),
                "alert": (figure.higherIsWorse == true && value > 0 && figure.key != "warnings"),
            ]
            if let link = sections[figure.key], presentSections.contains(link) { tile["link"] = link }
            if let delta = report.delta {
                let change = figure.value(delta)
                tile["change"] = abs(change) < 0.05 ? "±0" : HeadlineComparison.signed(change, share: figure.isShare)
                tile["worse"] = HeadlineComparison.isWorse(figure, change)
            }
            let trend = report.history.map { figure.value($0.headline) } + [value]
            if trend.count > 1 { tile["trend"] = Chart.sparkline(trend) }
            return tile
        }
        let stateLabels = ["enriched": "enriched", "needsCandidateSelection": "needs selection", "notFound": "not found",
                           "failed": "failed", "pending": "pending"]
        let states = ["enriched", "needsCandidateSelection", "notFound", "failed", "pending"].map {
            (label: stateLabels[$0] ?? $0, value: Double(status[$0] ?? 0), text: "\(status[$0] ?? 0)", accent: $0 == "failed" || $0 == "needsCandidateSelection")
        }
        let completenessBars = report.completeness.map {
            (label: $0.field, value: $0.total == 0 ? 0 : Double($0.present) / Double($0.total),
             text: percent($0.present, $0.total), accent: false)
        }
        var sourceBars: [(label: String, value: Double, text: String, accent: Bool)] = []
        for source in report.sources {
            sourceBars.append((source.name + " req", Double(source.requests), "\(source.requests)", false))
            sourceBars.append((source.name + " retry", Double(source.retries), "\(source.retries)", true))
            sourceBars.append((source.name + " 429", Double(source.rateLimited), "\(source.rateLimited)", true))
        }
        let charts: [[String: Any]] = [
            Chart.horizontal(id: "states", title: "Terminal states", states),
            Chart.histogram(id: "scores", title: "Match score (accepted)", report.matching.scoreHistogram, format: { "\(Int($0))" }),
            Chart.histogram(id: "candidates", title: "Best candidate score (needs selection)",
                            report.matching.candidateScoreHistogram, format: { "\(Int($0))" }),
            Chart.histogram(id: "confidence", title: "Scan confidence", report.review.confidenceHistogram,
                            format: { String(format: "%.1f", $0) }, accentBelow: 0.6),
            Chart.horizontal(id: "completeness", title: "Completeness", completenessBars, maximum: 1),
            Chart.horizontal(id: "sources", title: "Requests and retries per source", sourceBars),
        ]

        // Every figure of the report, by area, each linked to the rows behind it where it has any.
        let review = report.review, validity = report.validity, duplicates = report.duplicates
        func days(_ value: Double?) -> String { value.map { String(format: "%.1f days", $0) } ?? "–" }
        func link(_ code: String) -> Any { presentSections.contains("#" + FindingGuide.section(for: code)) ? "#" + FindingGuide.section(for: code) : false }
        let accepted = report.matching.bySource.map { "\($0.name) \($0.count)" }.joined(separator: ", ")
        let invalidCodes = report.findings.byCode.filter { QualityCodes.isInvalidISBN($0.code) }
        func figure(_ area: String, _ name: String, _ value: String, _ link: Any = false) -> [String: Any] {
            ["area": area, "name": name, "value": value, "link": link]
        }
        let invalidLink: Any = invalidCodes.first.map { "#" + $0.section } ?? false
        let reviewed = review.reviewed.map { "\($0) (\(review.correctedInReview ?? 0) / \(review.verifiedAsRead ?? 0))" } ?? "no review history"
        var figures: [[String: Any]] = [
            figure("matching", "accepted matches by source", accepted.isEmpty ? "none" : accepted),
            figure("matching", "mean score of accepted matches", report.matching.meanScore.map { String(format: "%.1f", $0) } ?? "–"),
            figure("review", "waiting (scan detections / uncertain matches)",
                   "\(review.waiting) (\(review.waitingScans) / \(review.waitingMatches))", link("review.waiting")),
            figure("review", "oldest waiting / median", "\(days(review.oldestWaitingDays)) / \(days(review.medianWaitingDays))"),
            figure("review", "reviewed (corrected / verified as they were)", reviewed),
            figure("review", "scan detections (without a confidence)", "\(review.scanDetections) (\(review.missingConfidence))"),
            figure("validity", "records with an invalid ISBN", "\(validity.invalidISBN)", invalidLink),
            figure("validity", "ISBN-10 and ISBN-13 disagree", "\(validity.isbn10And13Disagree)", link("isbn.10-13-disagree")),
            figure("validity", "impossible years", "\(validity.impossibleYear)", link("year.impossible")),
            figure("validity", "unreadable dates", "\(validity.unparseableDate)", link("date.unparseable")),
            figure("duplicates", "books with a duplicate (groups / records)",
                   "\(duplicates.books) (\(duplicates.groups) / \(duplicates.records))", link("duplicate.book")),
        ]
        for reason in duplicates.byReason {
            figures.append(figure("duplicates", "groups by reason: \(reason.name)", "\(reason.count)", link("duplicate.book")))
        }
        figures.append(figure("encoding", "records with a repaired field (read as Latin-1)", "\(report.encoding.repairedRecords)",
                              link("encoding.latin1-repaired")))

        // Completeness: a row per field, each linking to its section of records without it.
        let completeness: [[String: Any]] = report.completeness.map { field in
            let missing = field.total - field.present
            return [
                "field": field.field, "share": percent(field.present, field.total), "present": "\(field.present)",
                "missing": "\(missing)", "query": field.query, "section": "missing-\(field.field)",
                "rows": field.missingSample.map(Self.row),
                "more": missing > field.missingSample.count ? "\(missing - field.missingSample.count)" : false,
            ]
        }

        // Findings: a section per code (errors first), with what to do, the query that lists them
        // all, and a page of its findings.
        var groups: [String: [[String: Any]]] = [:]
        var listed: [String: Int] = [:]
        for finding in report.findings.items {
            listed[finding.code, default: 0] += 1
            guard groups[finding.code, default: []].count < ReportRenderer.htmlRowsPerCode else { continue }
            let ids = finding.rows.compactMap(\.id)
            let locations = finding.rows.map { "\($0.file):\($0.line)" }
            let titles = finding.rows.compactMap(\.title)
            groups[finding.code, default: []].append([
                "id": ids.prefix(Self.rowsPerFinding).joined(separator: " ")
                    + (ids.count > Self.rowsPerFinding ? " +\(ids.count - Self.rowsPerFinding)" : ""),
                "location": locations.prefix(Self.rowsPerFinding).joined(separator: " ")
                    + (locations.count > Self.rowsPerFinding ? " +\(locations.count - Self.rowsPerFinding)" : ""),
                "title": titles.prefix(3).joined(separator: " · ") + (titles.count > 3 ? " · …" : ""),
                "field": finding.field ?? "", "message": finding.message,
            ])
        }
        let findingGroups: [[String: Any]] = report.findings.byCode.map { code in
            let items = groups[code.code] ?? []
            return ["code": code.code, "severity": code.severity, "count": "\(code.count)", "items": items,
                    "section": code.section, "action": code.action, "query": code.query ?? false,
                    "more": code.count > items.count ? "\(code.count - items.count)" : false]
        }
        let checks: [[String: Any]] = report.checks.map {
            ["check": $0.check, "level": $0.level, "actual": CheckFile.format($0.actual), "location": $0.location,
             "result": $0.passed ? "passed" : "failed", "failed": !$0.passed]
        }
        let runs = report.runs.suffix(50)
        return [
            "css": String(decoding: PackageResources.report_css, as: UTF8.self),
            "library": report.library,
            "scope": report.scope.kind == "run" ? "run \(report.scope.runID ?? 0)" : "all records",
            "generatedAt": report.generatedAt, "schemaVersion": "\(report.schemaVersion)",
            "kpis": kpis, "charts": charts, "figures": figures, "findingGroups": findingGroups,
            "completeness": completeness, "checks": checks, "hasChecks": !checks.isEmpty,
            "profiles": report.profiles.map { profile -> [String: Any] in
                ["field": profile.field, "filled": percent(profile.filled, profile.total), "distinct": "\(profile.distinct)",
                 "minimum": profile.minimum ?? "–", "maximum": profile.maximum ?? "–",
                 "top": profile.top.prefix(5).map { "\($0.name) (\($0.count))" }.joined(separator: " · ")]
            },
            "previous": report.previous.map { "report #\($0.id) of \($0.generatedAt)" } ?? false,
            "changes": report.delta.map { delta in
                HeadlineComparison.changes(delta).map { ["name": $0.name, "text": $0.text, "worse": $0.isWorse] }
            } ?? [],
            "failureReasons": report.rows.failureReasons.map { ["name": $0.name, "count": "\($0.count)"] },
            "hasFailureReasons": !report.rows.failureReasons.isEmpty,
            "sources": report.sources.map {
                ["name": $0.name, "requests": "\($0.requests)", "cacheHits": "\($0.cacheHits)", "retries": "\($0.retries)",
                 "rateLimited": "\($0.rateLimited)", "failures": "\($0.failures)",
                 "latency": $0.meanLatencyMilliseconds.map { "\(Int($0.rounded())) ms" } ?? "–",
                 "cachedAnswers": "\($0.cachedAnswers)"]
            },
            "hasSources": !report.sources.isEmpty,
            "files": report.files.map {
                ["path": $0.path, "format": $0.format ?? "", "encoding": $0.encoding ?? "", "records": "\($0.records)",
                 "rejected": "\($0.rejected)"]
            },
            "runs": runs.reversed().map {
                ["id": "\($0.id)", "startedAt": $0.startedAt, "status": $0.status,
                 "duration": $0.durationSeconds.map { DurationText.describe(seconds: $0) } ?? "–", "records": "\($0.records)",
                 "written": "\($0.written)",
                 "command": $0.command]
            },
            "moreRuns": report.runs.count > runs.count ? "\(report.runs.count - runs.count)" : false,
        ]
    }
}

extension HTMLView {
    /// A record's row in a drill-down list.
    static func row(_ reference: QualityReport.RowReference) -> [String: Any] {
        ["id": reference.id ?? "", "location": "\(reference.file):\(reference.line)", "title": reference.title ?? ""]
    }
}

/// SVG chart geometry (the template draws it).
enum Chart {
    /// A small line of values over time, as SVG polyline points in a 100 × 24 box.
    static func sparkline(_ values: [Double]) -> String {
        let low = values.min() ?? 0, high = values.max() ?? 0
        let span = high - low
        return values.enumerated().map { index, value in
            let x = values.count > 1 ? Double(index) * 100 / Double(values.count - 1) : 0
            let y = span > 0 ? 22 - (value - low) / span * 20 : 12
            return fmt(x) + "," + fmt(y)
        }.joined(separator: " ")
    }

    static let width = 480.0

    /// Horizontal bars: a label, a bar, the value.
    static func horizontal(id: String, title: String, _ items: [(label: String, value: Double, text: String, accent: Bool)],
                           maximum: Double? = nil) -> [String: Any] {
        let rowHeight = 24.0, labelWidth = 150.0, valueWidth = 70.0
        let top = maximum ?? max(items.map(\.value).max() ?? 0, 1)
        let barSpace = width - labelWidth - valueWidth
        var bars: [[String: Any]] = [], labels: [[String: Any]] = []
        for (index, item) in items.enumerated() {
            let y = Double(index) * rowHeight
            let length = top > 0 ? max(item.value > 0 ? 1 : 0, barSpace * item.value / top) : 0
            bars.append(["x": fmt(labelWidth), "y": fmt(y + 5), "w": fmt(length), "h": fmt(rowHeight - 10),
                         "accent": item.accent, "tip": "\(item.label): \(item.text)"])
            labels.append(["x": fmt(labelWidth - 8), "y": fmt(y + 16), "anchor": "end", "text": item.label, "dim": false])
            labels.append(["x": fmt(labelWidth + length + 6), "y": fmt(y + 16), "anchor": "start", "text": item.text, "dim": true])
        }
        let height = max(rowHeight, Double(items.count) * rowHeight)
        return ["id": id, "title": title, "width": fmt(width), "height": fmt(height), "bars": bars, "labels": labels,
                "axis": items.isEmpty ? [] : [["x1": fmt(labelWidth), "y1": "0", "x2": fmt(labelWidth), "y2": fmt(height)]],
                "empty": items.isEmpty]
    }

    /// Vertical bars over buckets, with the bucket starts below.
    static func histogram(id: String, title: String, _ buckets: [QualityReport.Bucket], format: (Double) -> String,
                          accentBelow: Double? = nil) -> [String: Any] {
        let height = 180.0, bottom = 150.0, left = 8.0
        let total = buckets.reduce(0) { $0 + $1.count }
        let top = Double(max(buckets.map(\.count).max() ?? 0, 1))
        let slot = (width - left) / Double(max(buckets.count, 1))
        var bars: [[String: Any]] = [], labels: [[String: Any]] = []
        for (index, bucket) in buckets.enumerated() {
            let h = bucket.count == 0 ? 0 : max(1, (bottom - 16) * Double(bucket.count) / top)
            let x = left + Double(index) * slot
            bars.append(["x": fmt(x + 2), "y": fmt(bottom - h), "w": fmt(slot - 4), "h": fmt(h),
                         "accent": accentBelow.map { bucket.to <= $0 + 1e-9 } ?? false,
                         "tip": "\(format(bucket.from))–\(format(bucket.to)): \(bucket.count)"])
            if bucket.count > 0 {
                labels.append(["x": fmt(x + slot / 2), "y": fmt(bottom - h - 4), "anchor": "middle", "text": "\(bucket.count)",
                               "dim": true])
            }
            if index % 2 == 0 || buckets.count <= 10 {
                labels.append(["x": fmt(x + slot / 2), "y": fmt(bottom + 16), "anchor": "middle", "text": format(bucket.from),
                               "dim": false])
            }
        }
        labels.append(["x": fmt(width), "y": fmt(height - 2), "anchor": "end", "text": "n = \(total)", "dim": true])
        return ["id": id, "title": title, "width": fmt(width), "height": fmt(height), "bars": bars, "labels": labels,
                "axis": [["x1": fmt(left), "y1": fmt(bottom), "x2": fmt(width), "y2": fmt(bottom)]],
                "empty": total == 0]
    }

    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
}
