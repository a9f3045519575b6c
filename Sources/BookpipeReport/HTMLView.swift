import BookpipeCore
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
        let kpis: [[String: Any]] = [
            ["label": "records", "value": "\(rows.records)", "alert": false],
            ["label": "enriched", "value": percent(status["enriched"] ?? 0, rows.records), "alert": false],
            ["label": "needs selection", "value": "\(status["needsCandidateSelection"] ?? 0)",
             "alert": (status["needsCandidateSelection"] ?? 0) > 0],
            ["label": "failed lookups", "value": "\(status["failed"] ?? 0)", "alert": (status["failed"] ?? 0) > 0],
            ["label": "rejected rows", "value": "\(rows.rejected)", "alert": rows.rejected > 0],
            ["label": "review waiting", "value": "\(report.review.waiting)", "alert": report.review.waiting > 0],
            ["label": "corrected in review", "value": report.review.correctedInReview.map { "\($0)" } ?? "–", "alert": false],
            ["label": "verified as they were", "value": report.review.verifiedAsRead.map { "\($0)" } ?? "–", "alert": false],
            ["label": "duplicate groups", "value": "\(report.duplicates.sameISBN + report.duplicates.sameWork + report.duplicates.sameTitleAndAuthor)",
             "alert": false],
        ]
        let stateLabels = ["enriched": "enriched", "needsCandidateSelection": "needs selection", "notFound": "not found",
                           "failed": "failed", "pending": "pending"]
        let states = ["enriched", "needsCandidateSelection", "notFound", "failed", "pending"].map {
            (label: stateLabels[$0] ?? $0, value: Double(status[$0] ?? 0), text: "\(status[$0] ?? 0)", accent: $0 == "failed" || $0 == "needsCandidateSelection")
        }
        let completeness = report.completeness.map {
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
            Chart.horizontal(id: "completeness", title: "Completeness", completeness, maximum: 1),
            Chart.horizontal(id: "sources", title: "Requests and retries per source", sourceBars),
        ]

        // Every figure of the report, by area (the charts show some of them at a glance).
        let review = report.review, validity = report.validity, duplicates = report.duplicates
        func days(_ value: Double?) -> String { value.map { String(format: "%.1f days", $0) } ?? "–" }
        let accepted = report.matching.bySource.map { "\($0.name) \($0.count)" }.joined(separator: ", ")
        let figures: [[String: Any]] = [
            ["area": "matching", "name": "accepted matches by source", "value": accepted.isEmpty ? "none" : accepted],
            ["area": "matching", "name": "mean score of accepted matches",
             "value": report.matching.meanScore.map { String(format: "%.1f", $0) } ?? "–"],
            ["area": "review", "name": "waiting (scan detections / uncertain matches)",
             "value": "\(review.waiting) (\(review.waitingScans) / \(review.waitingMatches))"],
            ["area": "review", "name": "oldest waiting / median", "value": "\(days(review.oldestWaitingDays)) / \(days(review.medianWaitingDays))"],
            ["area": "review", "name": "reviewed (corrected / verified as they were)",
             "value": review.reviewed.map { "\($0) (\(review.correctedInReview ?? 0) / \(review.verifiedAsRead ?? 0))" } ?? "no review history"],
            ["area": "review", "name": "scan detections (without a confidence)", "value": "\(review.scanDetections) (\(review.missingConfidence))"],
            ["area": "validity", "name": "records with an invalid ISBN", "value": "\(validity.invalidISBN)"],
            ["area": "validity", "name": "ISBN-10 and ISBN-13 disagree", "value": "\(validity.isbn10And13Disagree)"],
            ["area": "validity", "name": "impossible years", "value": "\(validity.impossibleYear)"],
            ["area": "validity", "name": "unreadable dates", "value": "\(validity.unparseableDate)"],
            ["area": "duplicates", "name": "groups with the same ISBN", "value": "\(duplicates.sameISBN)"],
            ["area": "duplicates", "name": "groups matched to the same work", "value": "\(duplicates.sameWork)"],
            ["area": "duplicates", "name": "groups with the same title and author", "value": "\(duplicates.sameTitleAndAuthor)"],
            ["area": "duplicates", "name": "records in a group", "value": "\(duplicates.records)"],
            ["area": "encoding", "name": "records with a repaired field (read as Latin-1)", "value": "\(report.encoding.repairedRecords)"],
        ]

        // Findings grouped by code, in the order of the items (errors first), a page of each.
        var order: [String] = []
        var groups: [String: (severity: String, items: [[String: Any]], count: Int)] = [:]
        for finding in report.findings.items {
            if groups[finding.code] == nil {
                order.append(finding.code)
                groups[finding.code] = (finding.severity, [], 0)
            }
            groups[finding.code]!.count += 1
            guard groups[finding.code]!.items.count < ReportRenderer.htmlRowsPerCode else { continue }
            let ids = finding.rows.compactMap(\.id)
            let locations = finding.rows.map { "\($0.file):\($0.line)" }
            groups[finding.code]!.items.append([
                "id": ids.prefix(Self.rowsPerFinding).joined(separator: " ")
                    + (ids.count > Self.rowsPerFinding ? " +\(ids.count - Self.rowsPerFinding)" : ""),
                "location": locations.prefix(Self.rowsPerFinding).joined(separator: " ")
                    + (locations.count > Self.rowsPerFinding ? " +\(locations.count - Self.rowsPerFinding)" : ""),
                "title": finding.title ?? "", "field": finding.field ?? "", "message": finding.message,
            ])
        }
        let totals = Dictionary(uniqueKeysWithValues: report.findings.byCode.map { ($0.code, $0.count) })
        let findingGroups: [[String: Any]] = order.map { code in
            let group = groups[code]!
            let total = totals[code] ?? group.count
            return ["code": code, "severity": group.severity, "count": "\(total)", "items": group.items,
                    "more": total > group.items.count ? "\(total - group.items.count)" : false]
        }
        let runs = report.runs.suffix(50)
        return [
            "css": String(decoding: PackageResources.report_css, as: UTF8.self),
            "library": report.library,
            "scope": report.scope.kind == "run" ? "run \(report.scope.runID ?? 0)" : "all records",
            "generatedAt": report.generatedAt, "schemaVersion": "\(report.schemaVersion)",
            "kpis": kpis, "charts": charts, "figures": figures, "findingGroups": findingGroups,
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
                 "command": $0.command]
            },
            "moreRuns": report.runs.count > runs.count ? "\(report.runs.count - runs.count)" : false,
        ]
    }
}

/// SVG chart geometry (the template draws it).
enum Chart {
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
