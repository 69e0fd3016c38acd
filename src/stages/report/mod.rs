//! The report stage: the crawl audit. How replicated is the crawl, why,
//! and what could a recrawl skip (the paper's section 3: Figure 1, Table
//! 2, the crawl savings), with YaCy's double-content flags per document.
//!
//! It reads what the earlier stages wrote (`docs.csv`, `overlap.csv`,
//! `stats.json`, `fuzzy.fpd`) and, for fuzzy signatures with other than
//! the default parameters only, the inputs again.
//! Memory grows with the documents by a few bits each and 8 bytes a copy
//! ([`documents::Docs`]), with the hosts by their names and a few numbers
//! ([`crate::store::analysis::host_names`]), and with the centers that have a pair ([`links`]), not
//! with the Overlap table, which is streamed: once for components, savings,
//! near-replica counts and which alias pairs are near-replicas, once each
//! for group diameters and host overlap. docs.csv is read twice: for every
//! per-document column; and to write it again with each document's
//! near_group, gathering the URLs the tables show and writing flags.csv in
//! the same pass. What is gathered per document or per link is held
//! within shares of `--memory` and spilled to the stage's scratch directory
//! beyond them: each row's host ([`host_column`], a sixteenth), the URL
//! keys of alias matching (a quarter) and the alias pairs found (an eighth,
//! [`alias_table`], whose URLs are gathered a quarter of the budget at a
//! time, [`url_windows`], beyond the first window from a side file of the
//! table's URLs written in the same pass, [`url_side`]),
//! the near-replica groups and their hosts (a quarter, [`group_table`],
//! their URLs gathered an eighth at a time), the (host, title) keys (an
//! eighth), the host overlap's requests per pair, (exact group, host)
//! entries and host-pair counts ([`hosts`], a quarter), the links of the
//! groups whose diameter is measured, held a batch at a time, and for
//! flags.csv the documents sorted by fuzzy signature (a quarter) and the
//! rows its flags mark ([`marks`]), read back in row order as it is
//! written.
//!
//! Outputs: `report.json` (below), `groups.csv` ([`groups`]), `hosts.csv`
//! ([`hosts`]), `host-summary.csv` ([`host_summary`]), `aliases.csv`
//! ([`aliases`]), `flags.csv` ([`flags`]), `report.html` ([`html`]), and
//! docs.csv's `near_group` column (see [`crate::store::docs`]), written
//! right after the groups are found, while each document's component is
//! still known.
//!
//! # report.html's bounds
//!
//! The page stays a few hundred kilobytes to a couple of megabytes
//! whatever the crawl (a link's text is cut at [`html::URL_SHOWN`]
//! characters, its target never): it lists the [`GROUPS_SHOWN`] largest groups, each
//! with its first [`MEMBERS_SHOWN`] members (gathered in one pass over
//! the components, never more), the [`HOSTS_SHOWN`] hosts with the most
//! near-replicas, the [`html::TABLE_ROWS`] most covered mirror pairs, the
//! first [`quality::INPUTS_SHOWN`] inputs, and the corrupt records
//! stats.json samples; the CSV tables and docs.csv hold the rest.
//!
//! # report.json
//!
//! Its keys are stable, for pipelines; they are documented in one place,
//! docs/audit.md, and [`Report`] is their one source.
//!
//! A document's near-replicas are its connected component in the graph
//! whose links are exact copies and Overlap-table pairs: the paper counts
//! "the number of replicas for each document", and a component is the
//! set of documents one can reach by replica links, the answer that does
//! not depend on document order. Components can chain (A~B~C without A~C),
//! which is why groups carry a diameter and a `chained` flag, and why the
//! host overlap and `near_replica_count` use direct links only.

pub mod against;
pub mod alias_table;
pub mod aliases;
pub mod components;
pub mod current;
pub mod fields;
pub mod flags;
pub mod group_table;
pub mod groups;
pub mod histogram;
pub mod host_summary;
pub mod hosts;
pub mod html;
pub mod marks;
pub mod mirror_sets;
pub mod quality;
pub mod runs;
pub mod since;
pub mod url_side;
pub mod url_windows;
pub mod warnings;

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use crate::base::progress::Progress;
use crate::store::analysis::keep::KeepRule;
use crate::store::analysis::{documents, host_column, kept, links, savings};
use crate::store::registry::REPORT;
use crate::store::scopes::Scope;
use crate::store::stage::{Outcome, Stage};
pub(crate) use crate::store::stats::ReportStats;
use crate::store::{self, Manifest, OutDir};
use url_side::UrlSource;

pub use flags::FuzzyConfig;

/// How many groups report.json lists.
pub const TOP_GROUPS: usize = 20;

/// How many groups report.html lists, the largest first ...
pub const GROUPS_SHOWN: usize = 100;
/// ... with the first members of each (docs.csv's `near_group` names
/// them all).
pub const MEMBERS_SHOWN: usize = 50;

/// How many hosts report.html lists (host-summary.csv has them all).
pub const HOSTS_SHOWN: usize = 100;

#[derive(Clone, Debug)]
pub struct ReportConfig {
    pub fuzzy: FuzzyConfig,
    /// Whether flags.csv carries fuzzy signatures: stored by the
    /// fingerprint stage for the default parameters; for others, the
    /// inputs are read again, which costs about as much reading and
    /// extraction as the fingerprint stage.
    pub read_texts: bool,
    /// Output directories of other runs over the same inputs, whose
    /// near-replica figures are shown beside this run's.
    pub compare: Vec<PathBuf>,
    /// Which copy stands for a group in the savings, the host summary and
    /// the next analysis's comparison.
    pub keep: KeepRule,
    /// Memory budget in bytes.
    pub memory: u64,
}

/// Everything report.json holds (keys documented in docs/outputs.md).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub overlap_version: String,
    pub chunk: String,
    pub threshold: u32,
    /// What made a pair of documents near-replicas, in words: `F >= 15`,
    /// or `Jaccard >= 0.8 and F >= 1` (`--jaccard`, `--containment`).
    pub criterion: String,
    /// Where copies and pairs are looked for: `crawl`, `host` or `site`.
    pub scope: String,
    pub documents: u64,
    pub empty_documents: u64,
    pub bytes: u64,
    pub exact: ExactSummary,
    pub near: NearSummary,
    pub histogram: HistogramSummary,
    pub savings: SavingsSummary,
    pub groups: GroupsSummary,
    pub hosts: HostsSummary,
    pub aliases: AliasSummary,
    pub flags: flags::FlagCounts,
    /// This run's near-replica figures, then those of the runs compared.
    pub runs: Vec<runs::Run>,
    /// What changed since the previous analysis of a chain; null in a
    /// first analysis.
    pub since_previous: Option<since::SincePrevious>,
    /// How much of this crawl the reference of `--against` holds; null
    /// without one.
    pub against: Option<against::Against>,
    /// The headline figures of this crawl's documents, the pages kept
    /// while missing counted apart; null in a first analysis, where every
    /// document is of this crawl.
    pub current_crawl: Option<current::CurrentCrawl>,
    /// What the fingerprint stage made of the inputs; null where
    /// stats.json has no fingerprint section.
    pub data_quality: Option<quality::QualitySummary>,
    /// Why the analysis is likely to miss replication, one sentence each
    /// (documents too short to reach the criterion, stop chunks): empty
    /// when nothing says so.
    pub warnings: Vec<String>,
    /// One alias pair per kind, for report.html (aliases.csv has them all).
    #[serde(skip)]
    pub alias_examples: Vec<aliases::Example>,
    /// The groups report.html lists, with their first members.
    #[serde(skip)]
    pub shown_groups: Vec<groups::Shown>,
    /// The hosts report.html lists (host-summary.csv has them all).
    #[serde(skip)]
    pub host_rows: Vec<host_summary::HostRow>,
    /// The data quality's detail, for report.html.
    #[serde(skip)]
    pub quality: Option<quality::Quality>,
    /// Documents whose text was read again for fuzzy signatures with
    /// other than the default parameters (stats.json only).
    #[serde(skip)]
    pub texts_read: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ExactSummary {
    pub groups: u64,
    pub documents_in_groups: u64,
    pub copies: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct NearSummary {
    pub pairs: u64,
    pub groups: u64,
    pub documents_in_groups: u64,
    pub largest_group: u64,
    pub chained_groups: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct HistogramSummary {
    pub bins: [&'static str; 7],
    pub exact: histogram::Histogram,
    pub near: histogram::Histogram,
    pub exact_replicated_percent: f64,
    pub near_replicated_percent: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SavingsSummary {
    pub rule: &'static str,
    /// The `--keep` rule the pages are taken in (`input-order`: by docID).
    pub keep: String,
    pub exact: savings::Skippable,
    pub near: savings::Skippable,
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupsSummary {
    pub chain_rule: String,
    pub top: Vec<groups::Group>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HostsSummary {
    /// Hosts with a name (host-summary.csv's rows).
    pub hosts: u64,
    pub host_pairs: u64,
    pub mirror_pairs: u64,
    pub mirror_rule: String,
    /// What the scope leaves of host pairs (`--scope host` or `site`);
    /// null for the whole crawl.
    pub scope_note: Option<String>,
    pub mirrors: Vec<hosts::HostPair>,
    /// The mirror pairs joined into sets: a site and its mirrors, the
    /// most hosts first.
    pub mirror_sets: Vec<mirror_sets::MirrorSet>,
}

#[derive(Clone, Debug, Serialize)]
pub struct AliasSummary {
    pub www: aliases::AliasCounts,
    pub scheme: aliases::AliasCounts,
    pub index: aliases::AliasCounts,
    pub query: aliases::AliasCounts,
    /// The four kinds together.
    pub total: aliases::AliasCounts,
    /// The real aliases: pairs of every kind with the same text or
    /// near-replicas (`total.exact + total.near`).
    pub same_content: u64,
}

impl AliasSummary {
    fn new(
        www: aliases::AliasCounts,
        scheme: aliases::AliasCounts,
        index: aliases::AliasCounts,
        query: aliases::AliasCounts,
    ) -> AliasSummary {
        let mut total = aliases::AliasCounts::default();
        for c in [&www, &scheme, &index, &query] {
            total.pairs += c.pairs;
            total.exact += c.exact;
            total.near += c.near;
            total.different += c.different;
            total.empty += c.empty;
        }
        let same_content = total.exact + total.near;
        AliasSummary { www, scheme, index, query, total, same_content }
    }
}

/// Builds the report of `out` and writes its files.
pub(crate) fn run(
    out: &OutDir,
    cfg: &ReportConfig,
    progress: &Progress,
) -> anyhow::Result<Outcome<ReportStats>> {
    let mut flags = vec![
        cfg.fuzzy.min_token_len.to_string(),
        cfg.fuzzy.quant_rate.to_string(),
        cfg.read_texts.to_string(),
    ];
    for dir in &cfg.compare {
        flags.push(runs::key_of(dir)?);
    }
    // The default adds nothing, so that earlier reports stay up to date.
    if !cfg.keep.is_input_order() {
        flags.push(format!("keep={}", cfg.keep));
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let key = Stage::chained_key(out, &REPORT, &flags)?;
    let Some(stage) = Stage::begin(out, &REPORT, key, progress)? else {
        return Ok(Outcome::UpToDate);
    };
    let report = build(out, cfg, progress, &stage.scratch()?)?;
    let mut manifest = Manifest::read(out)?;
    let keep = (!cfg.keep.is_input_order()).then(|| cfg.keep.to_string());
    if manifest.keep != keep {
        manifest.keep = keep;
        manifest.write(out)?;
    }
    let mut json = serde_json::to_vec_pretty(&report).context("cannot encode report.json")?;
    json.push(b'\n');
    store::write_atomic(&out.report_json(), &json)?;
    store::write_atomic(&out.report_html(), html::render(&report).as_bytes())?;
    let mut stats = ReportStats {
        documents: report.documents,
        empty_documents: report.empty_documents,
        exact_copy_percent: report.histogram.exact_replicated_percent,
        near_replica_percent: report.histogram.near_replicated_percent,
        savings_exact_percent: report.savings.exact.pages_percent,
        savings_near_percent: report.savings.near.pages_percent,
        groups: report.near.groups,
        mirror_host_pairs: report.hosts.mirror_pairs,
        alias_pairs: report.aliases.total.pairs,
        alias_same_content: report.aliases.same_content,
        alias_different: report.aliases.total.different + report.aliases.total.empty,
        corrupt_records: report.data_quality.as_ref().map_or(0, |q| q.corrupt_records),
        texts_read: report.texts_read,
        warnings: report.warnings.clone(),
        current_crawl: report.current_crawl.clone(),
        ..ReportStats::default()
    };
    let outputs = [
        out.report_json(),
        out.report_html(),
        out.groups(),
        out.hosts(),
        out.host_summary(),
        out.aliases(),
        out.flags(),
        out.replicas(),
        out.docs(),
    ];
    stage.finish(&mut stats, &outputs)?;
    Ok(Outcome::Ran(stats))
}

/// Computes every figure and writes the CSV tables, spilling to `scratch`.
fn build(out: &OutDir, cfg: &ReportConfig, progress: &Progress, scratch: &Path) -> anyhow::Result<Report> {
    let manifest = Manifest::read(out)?;
    let Some(counted) = manifest.pairs.clone() else {
        anyhow::bail!("{} has no complete pairs stage: run `overlap pairs` first", out.root().display());
    };
    let mut criterion = counted.criterion()?.describe();
    if let Some(method) = &counted.approximate {
        criterion.push_str(&format!(", candidates from {method} (approximate: pairs may be missing)"));
    }
    let (docs_csv, overlap) = (out.docs(), out.overlap());
    // One pass over docs.csv for everything taken from every row.
    let mut url_entries = aliases::UrlEntries::new(cfg.memory / 4, manifest.documents, scratch);
    let mut titles = flags::Titles::new(cfg.memory / 8, manifest.documents, scratch);
    let mut url_bytes = 0u64;
    // Each row's host within a sixteenth, beside the quarter and the
    // eighth above.
    let host_column = host_column::HostColumnBuilder::new(
        cfg.memory / 16,
        manifest.documents,
        scratch.join("hosts-column.fpd"),
    );
    let docs = documents::load_docs(&docs_csv, manifest.documents, host_column, |r, center, row| {
        url_entries.add(r, center, row.url)?;
        titles.add(r, row.host, row.title())?;
        url_bytes += row.url.len() as u64;
        Ok(())
    })?;
    let n = docs.len();
    let (mut near_aliases, url_flags) = aliases::find(url_entries, &docs, cfg.memory / 8, scratch)?;
    let titles_not_first = titles.not_first(n as u64)?;
    let compared = runs::load(&manifest, out, n as u64, &cfg.compare)?;

    let links = {
        let mut near_aliases = near_aliases.cursor()?;
        let links = links::Links::build(&docs, &overlap, |i, j| near_aliases.pair(i, j))?;
        near_aliases.finish()?;
        links
    };
    let alias_table = near_aliases.finish()?;
    let alias_summary = alias_table.summary()?;
    let (exact, exact_h, near_h, empty) = histograms(&docs, &links);

    // The recrawl rule's verdicts: by docID from the link pass, or in the
    // `--keep` rule's order (8 bytes a document more).
    let ranked = match cfg.keep.is_input_order() {
        true => None,
        false => Some(kept::stand_ins(out, &docs, &cfg.keep, true, cfg.memory / 4, scratch)?),
    };
    for warning in ranked.iter().flat_map(kept::StandIns::warnings) {
        progress.warn(&warning);
    }
    let verdicts = kept::Verdicts { docs: &docs, links: &links, ranked: ranked.as_ref() };
    since::write(&out.replicas(), &docs, &links, &verdicts)?;

    // The fuzzy signatures flags.csv shows, and which rows share theirs,
    // ready for the pass that writes near_group, which writes flags.csv
    // too. The fingerprint stage stored the signatures with the default
    // parameters; other parameters need the texts again. Sorting them takes
    // a quarter of the budget, let go before the groups take theirs; the
    // marks kept are within a sixteenth.
    let stored = out.fuzzy();
    let (signatures, texts_read) = if !cfg.read_texts {
        (None, 0)
    } else if cfg.fuzzy == FuzzyConfig::default() && stored.is_file() {
        (Some(stored), 0)
    } else {
        let computed = scratch.join("fuzzy.fpd");
        let read = flags::fuzzy_signatures(&docs_csv, n as u64, &manifest, cfg.fuzzy, progress, &computed)?;
        (Some(computed), read)
    };
    let shared = match &signatures {
        Some(path) => Some(flags::shared_signatures(path, n as u64, cfg.memory / 4, scratch)?),
        None => None,
    };
    let fuzzy = signatures
        .as_deref()
        .zip(shared.as_ref())
        .map(|(signatures, shared)| flags::Fuzzy { signatures, shared });

    let edge_budget = (cfg.memory / 4 / 16).max(1 << 16);
    let group_table = group_table::build(&docs, &links, &overlap, edge_budget, cfg.memory / 4, scratch)?;
    let group_summary = group_table.summary(GROUPS_SHOWN)?;
    let members = groups::first_members(&docs, &links, &group_summary.shown, MEMBERS_SHOWN);
    let first_hosts = groups::first_hosts(&docs, &links, &group_summary.shown, groups::HOSTS_NAMED)?;
    let group_of = |row: u32| links.group_of(&docs, row);
    let host_counts =
        host_summary::HostCounts::new(&docs, |row| group_of(row).is_some(), |row| verdicts.near_kept(row))?;

    // One more pass over docs.csv: each document's near_group written in,
    // and the URLs the shown groups, their members and the alias examples
    // show read, with those of the first windows of groups and of alias
    // pairs (the only ones unless their URLs are over a sixteenth and an
    // eighth of the budget: with an eighth and a quarter, the two lists of
    // URLs, grown by doubling up to their caps, took the report's heap to
    // 24.4 MiB at `--memory 32M` on a generated crawl of 3.4 GB).
    let mut wanted: Vec<u32> = group_summary.shown.iter().map(|g| g.group).collect();
    wanted.extend(alias_summary.rows());
    wanted.extend(members.iter().flatten());
    wanted.sort_unstable();
    wanted.dedup();
    let mean_url = url_bytes / (n as u64).max(1);
    let mut group_windows = group_table.windows(cfg.memory / 16, mean_url);
    let first_groups = group_windows.next_window()?.unwrap_or_default();
    let mut group_urls = first_groups.urls();
    let mut alias_windows = alias_table.windows(cfg.memory / 8, mean_url);
    let first_aliases = alias_windows.next_window()?.unwrap_or_default();
    let mut alias_urls = first_aliases.urls();
    // The URLs of tables with more windows, copied aside in the same pass.
    let mut group_side =
        url_side::for_later_windows(&group_windows, &first_groups, n, scratch.join("group-urls.bin"))?;
    let mut alias_side =
        url_side::for_later_windows(&alias_windows, &first_aliases, n, scratch.join("alias-urls.bin"))?;
    let mut urls = documents::UrlsWanted::new(&wanted);
    // The savings' pages and bytes too: the report holds no payload sizes.
    let (mut exact_tally, mut near_tally) = (savings::Tally::default(), savings::Tally::default());
    let mut current = current::Tally::default();
    let mut flags_csv =
        flags::FlagsWriter::create(&out.flags(), &docs, fuzzy, &titles_not_first, &url_flags)?;
    store::docs::write_near_groups(out, |row, doc| {
        flags_csv.push(row, doc, || links.near_count(&docs, row))?;
        let bytes = doc.text.map_or(0, |t| t.bytes);
        let (exact_kept, near_kept) = (verdicts.exact_kept(row), verdicts.near_kept(row));
        exact_tally.add(bytes, exact_kept);
        near_tally.add(bytes, near_kept);
        let empty = docs.is_empty_doc(row);
        current.add(current::Doc {
            missing: doc.missing_for > 0,
            empty,
            exact_copy: !empty && docs.exact_size(row) >= 2,
            near_replica: !empty && links.component_documents(&docs, row) >= 2,
            exact_skipped: !exact_kept,
            near_skipped: !near_kept,
        });
        urls.add(row, doc.url);
        group_urls.add(row, doc.url);
        alias_urls.add(row, doc.url);
        for side in [&mut group_side, &mut alias_side].into_iter().flatten() {
            side.add(row, doc.url);
        }
        Ok(group_of(row).map(|g| docs.doc_id(g)))
    })?;
    let mut flag_counts = flags_csv.finish()?;
    let urls = urls.finish();
    let savings = SavingsSummary {
        rule: savings::RULE,
        keep: cfg.keep.to_string(),
        exact: exact_tally.skippable(),
        near: near_tally.skippable(),
    };
    let group_urls = group_urls.finish_capped();
    let alias_urls = alias_urls.finish_capped();
    drop(wanted);
    let group_side = group_side.map(url_side::SideWriter::finish).transpose()?;
    let alias_side = alias_side.map(url_side::SideWriter::finish).transpose()?;
    let groups_from = group_side.as_ref().map_or(UrlSource::Docs(&docs_csv), UrlSource::Side);
    group_table::write_csv(&out.groups(), &docs, groups_from, group_windows, first_groups, group_urls)?;
    drop((group_table, group_side));
    let aliases_from = alias_side.as_ref().map_or(UrlSource::Docs(&docs_csv), UrlSource::Side);
    alias_table::write_csv(&out.aliases(), &docs, aliases_from, alias_windows, first_aliases, alias_urls)?;
    drop((alias_table, alias_side));
    let alias_examples = alias_summary.examples(&urls);
    let [www, scheme, index, query] = alias_summary.counts.clone();
    let near = NearSummary {
        pairs: links.pairs,
        groups: group_summary.groups,
        documents_in_groups: group_summary.documents,
        largest_group: group_summary.largest,
        chained_groups: group_summary.chained,
    };
    let mut shown = group_summary.shown;
    for (g, hosts) in shown.iter_mut().zip(first_hosts) {
        g.first_hosts = hosts;
    }
    groups::name(&mut shown, &docs, &urls);
    let shown_groups = groups::shown(&shown, members, &docs, &urls);
    let top: Vec<groups::Group> = shown.into_iter().take(TOP_GROUPS).collect();
    drop(urls);

    // The groups' links are gone by now: the host tables take their share.
    let host_budget = (cfg.memory / 4).max(1 << 20);
    let host_pairs = hosts::host_pairs(&docs, &overlap, host_budget, scratch)?;
    hosts::write_csv(&out.hosts(), &docs, &host_pairs)?;
    let mirrors = hosts::mirrors(&docs, &host_pairs)?;
    let host_rows =
        host_summary::write_csv(&out.host_summary(), &docs, &host_counts, &host_pairs, HOSTS_SHOWN)?;
    let named_hosts = docs.hosts.iter().filter(|h| !h.is_empty()).count() as u64;
    drop(host_counts);

    flag_counts.min_token_len = cfg.fuzzy.min_token_len;
    flag_counts.quant_rate = cfg.fuzzy.quant_rate;

    let mut all_runs = vec![runs::Run {
        chunk: manifest.chunk.clone(),
        threshold: counted.threshold,
        criterion: criterion.clone(),
        near: near_h.clone(),
        near_replicated_percent: near_h.replicated_percent(),
        savings_near: savings.near.clone(),
    }];
    all_runs.extend(compared);
    let since_previous = match &manifest.chain {
        Some(chain) => Some(since::compare(out, chain.analysis)?),
        None => None,
    };
    let current_crawl = manifest.chain.is_some().then(|| current.finish());
    let against = against::read(out, &manifest)?;
    let quality = quality::read(out)?;
    let scope = manifest.scope()?;
    let scope_note = match scope {
        Scope::Crawl => None,
        Scope::Host => Some(
            "Copies and pairs are looked for within each host (--scope host): no two hosts share a replica, \
             so there are no mirrored hosts by construction."
                .to_string(),
        ),
        Scope::Site => Some(
            "Copies and pairs are looked for within each registrable domain (--scope site): host pairs and \
             mirrors are hosts of the same site."
                .to_string(),
        ),
    };
    Ok(Report {
        overlap_version: env!("CARGO_PKG_VERSION").to_string(),
        chunk: manifest.chunk,
        threshold: counted.threshold,
        criterion,
        scope: scope.to_string(),
        documents: n as u64,
        empty_documents: empty,
        bytes: exact_tally.bytes(),
        exact,
        near,
        histogram: HistogramSummary {
            bins: histogram::BINS,
            exact_replicated_percent: exact_h.replicated_percent(),
            near_replicated_percent: near_h.replicated_percent(),
            exact: exact_h,
            near: near_h,
        },
        savings,
        groups: GroupsSummary {
            chain_rule: format!(
                "A group is chained when two of its exact groups are more than two links apart (diameter > 2), \
                 or, for groups over {} exact groups or too costly to search, when fewer than {}% of their pairs \
                 are linked.",
                components::DIAMETER_MAX_CENTERS,
                components::CHAIN_DENSITY * 100.0
            ),
            top,
        },
        hosts: HostsSummary {
            hosts: named_hosts,
            host_pairs: host_pairs.len() as u64,
            mirror_pairs: mirrors.len() as u64,
            mirror_rule: format!(
                "Two hosts mirror each other when more than {}% of one's non-empty documents, and at least {}, \
                 are replicated (exact copy, or an Overlap-table pair) on the other.",
                hosts::MIRROR_SHARE * 100.0,
                hosts::MIRROR_MIN_DOCS
            ),
            scope_note,
            mirror_sets: mirror_sets::of(&mirrors),
            mirrors,
        },
        aliases: AliasSummary::new(www, scheme, index, query),
        flags: flag_counts,
        runs: all_runs,
        since_previous,
        against,
        current_crawl,
        data_quality: quality.as_ref().map(|q| q.summary.clone()),
        warnings: warnings::read(out)?,
        alias_examples,
        shown_groups,
        host_rows,
        quality,
        texts_read,
    })
}

/// The exact-group summary, the exact and near replica histograms over the
/// non-empty documents, and the number of empty ones.
fn histograms(
    docs: &documents::Docs,
    links: &links::Links,
) -> (ExactSummary, histogram::Histogram, histogram::Histogram, u64) {
    let mut exact_h = histogram::Histogram::default();
    let mut near_h = histogram::Histogram::default();
    let mut exact = ExactSummary::default();
    let mut empty = 0u64;
    for d in 0..docs.len() as u32 {
        if docs.is_empty_doc(d) {
            empty += 1;
            continue;
        }
        let size = docs.exact_size(d);
        exact_h.add(size);
        near_h.add(links.component_documents(docs, d));
        if size >= 2 {
            exact.documents_in_groups += 1;
            if docs.is_center(d) {
                exact.groups += 1;
            } else {
                exact.copies += 1;
            }
        }
    }
    exact_h.finish();
    near_h.finish();
    (exact, exact_h, near_h, empty)
}
