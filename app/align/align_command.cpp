#include "app/align/align_command.hpp"

#include <exception>
#include <new>
#include <string>

#include "app/align/align_run.hpp"
#include "app/align/serve_command.hpp"
#include "io/process_group.hpp"
#include "core/align/scoring.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "io/align/output.hpp"

namespace swgpu::app {

std::string conventions_text() {
    return "Conventions:\n"
           "  Gap costs follow BLAST: a gap of length k costs OPEN + k*EXTEND, both positive (BLAST 11/1 is\n"
           "    parasail/SSW/EMBOSS open 12 extend 1). Defaults: protein BLOSUM62 11/1 (BLOSUM45 14/2, BLOSUM50 13/2,\n"
           "    BLOSUM80/90 10/1, PAM30 9/1, PAM70 10/1, PAM250 14/2); DNA match 2, mismatch -3, gaps 5/2\n"
           "    (NUC.4.4 10/6).\n"
           "  Type (--seqtype auto): DNA when at least 90 % of the letters are ACGTUN, else protein; the queries\n"
           "    (each --batch file on its own) and the database by the same rule, every record checked against its\n"
           "    file: in a DNA file a record that cannot be DNA is an error; in a protein file a record that looks\n"
           "    like DNA (poly-A) is protein, with a warning. A .swdb's type is the one makedb wrote. IUPAC codes (R Y K M S W B D H V) score as N with --match/--mismatch (NUC.4.4 scores them).\n"
           "  Outputs (-o, --dotplot, --batch outputs) never replace an input: naming one is an error (exit 2).\n"
           "  DNA queries are searched on both strands (--strand); a minus-strand hit is the reverse-complemented\n"
           "    query against the subject, printed with sstart > send (tabular, json, pair) and flag 16 (SAM).\n"
           "  Coordinates are 1-based and inclusive. Ids are the first word of the FASTA header.\n"
           "  Order: queries in input order; a query's hits by E-value (asc; by score with --no-evalue), then\n"
           "    score (desc), then subject index in the database (asc), then plus strand first. -k keeps a query's\n"
           "    k best hits in that order; those with an E-value above -e are then dropped. One (the optimal)\n"
           "    alignment per query, subject and strand.\n"
           "  Ties: the end cell is the maximal cell with the smallest query end, then the smallest subject end;\n"
           "    traceback prefers the diagonal over a gap in the subject over a gap in the query, and closing a\n"
           "    gap over extending it. Every backend and thread count prints byte-identical output.\n"
           "  E-values and bit scores as blastp -comp_based_stats 0 -seg no (Spouge's finite-size correction,\n"
           "    NCBI's parameters), from the whole database's size; --no-evalue prints NA instead.\n"
           "  No masking by default; --seg yes (protein) and --dust yes (DNA) mask the queries as BLAST does.\n"
           "  --comp-based-stats 1: composition-based statistics as blastp -comp_based_stats 1\n"
           "    (BLOSUM45/50/62/80/90, PAM30/70/250).\n"
           "  --db-chunk only bounds memory: the database is read once, in chunks, with the same result.\n"
           "Output (--outfmt, names in any case): 6 | \"6 COLUMN ...\" | 7 | \"7 COLUMN ...\" | sam | paf | pair | json |\n"
           "  \"json COLUMN ...\"\n"
           "  6 = qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore (BLAST).\n"
           "  Columns: std (the 12 above) " + wrapped(io::column_names(), "    ", 100) + "\n"
           "  sam: one primary record per read (-k N: up to N-1 secondary ones, flag 256, SEQ and QUAL *), MAPQ\n"
           "    3.01*(bits of the best hit - bits of the best other), 0-60; default -e 1e-3, reads without such a\n"
           "    hit unmapped; FASTQ QUAL; @SQ per subject with a hit, AS:i raw score, NM:i, ZE:f E-value, soft\n"
           "    clips. paf: minimap2's 12 columns with NM:i, AS:i, ZE:Z, cg:Z. json: one object per hit and line,\n"
           "    keys = column names.\n"
           "  Results go to stdout or -o FILE (written to a temporary name, renamed when complete).\n"
           "Exit codes: 0 success, 1 bad input data, 2 bad command line, 3 runtime or device failure (also\n"
           "  --backend gpu without a usable GPU), 4 out of memory, 5 output could not be written.\n";
}

// The options in the order --help lists them, by group.
align_command::align_command(CLI::App& app)
    : command(app, "align", "Search every query against every database sequence (Smith-Waterman-Gotoh)") {
    add_input_options(sub_);
    add_scoring_options(sub_);
    add_hit_options(sub_);
    add_run_options(sub_);
    add_masking_options(sub_);
    add_report_options(sub_);
    sub_->footer(conventions_text());
}

// QUERY, DB, --batch.
void align_command::add_input_options(CLI::App* sub) {
    sub->add_option("QUERY", s_.query, "Query sequences: FASTA/FASTQ, plain or gzip/bgzip, '-' for stdin, or "
                                       "FILE:NAME:BEG-END for a region of an indexed FASTA (not with --batch)");
    sub->add_option("DB", s_.db, "Database sequences (same forms as QUERY), or a database made by swgpu makedb (PREFIX.swdb)");
    sub->add_option("--batch", s_.batch,
                    "A file listing query files, one per line (QUERY [OUTPUT]; # starts a comment): all are searched "
                    "in one pass over DB, and each gets its own output file, the one a run with that QUERY alone "
                    "writes (OUTPUT, else the query file's name with .out appended, in the -o directory, default "
                    "the current one). Then give only DB");
    sub->add_option("--server", s_.server,
                    "Send the search to `swgpu serve` at this address (http://HOST:PORT) and print its answer, the "
                    "output a local run prints; give QUERY only (token: $SWGPU_TOKEN)");

}

// The scoring: matrix, gap costs, DNA scores, sequence type, strands.
void align_command::add_scoring_options(CLI::App* sub) {
    matrix_ = sub->add_option("--matrix", s_.matrix,
                              "Substitution matrix: a built-in name (" + [] {
                                  std::string l;
                                  for (const auto& n : substitution_matrix::builtin_names())
                                      l += (l.empty() ? "" : ", ") + n;
                                  return l;
                              }() + ") or a file in NCBI text format [default: BLOSUM62 for protein, "
                                    "--match/--mismatch for DNA]");
    gap_open_ = sub->add_option("--gap-open", s_.gap_open, "Gap open penalty, BLAST convention [default: per matrix]");
    gap_extend_ =
        sub->add_option("--gap-extend", s_.gap_extend, "Gap extension penalty, BLAST convention [default: per matrix]");
    match_ = sub->add_option("--match", s_.match, "DNA match reward")->capture_default_str();
    mismatch_ = sub->add_option("--mismatch", s_.mismatch, "DNA mismatch score (negative)")->capture_default_str();
    match_->excludes(matrix_);
    mismatch_->excludes(matrix_);
    sub->add_option("--seqtype", s_.seqtype,
                    "Sequence type; auto: DNA when at least 90 % of the letters are ACGTUN, for the queries (each "
                    "--batch file on its own) and the database alike")
        ->check(CLI::IsMember({"auto", "protein", "dna"}))
        ->capture_default_str();
    strand_ = sub->add_option("--strand", s_.strand, "DNA strands of the query to search")
                  ->check(CLI::IsMember({"both", "plus", "minus"}))
                  ->capture_default_str();
}

// Which hits are printed, and where: -k, -e, --no-evalue, --outfmt, -o.
void align_command::add_hit_options(CLI::App* sub) {
    max_target_seqs_ = sub->add_option("-k,--max-target-seqs", s_.max_target_seqs,
                                       "Hits kept per query [default: 500; sam: 1, the primary record]");
    auto* evalue = sub->add_option("-e,--evalue", s_.evalue,
                                   "Print hits with an E-value up to this [default: 10; sam: 1e-3, a read without "
                                   "such a hit is unmapped]");
    evalue_ = evalue;
    auto* no_evalue = sub->add_flag("--no-evalue", s_.no_evalue,
                                    "No statistics: print raw scores only (E-value and bit score are NA)");
    evalue->excludes(no_evalue);
    sub->add_option("--outfmt", s_.outfmt, "Output format: 6, \"6 COLUMN ...\", 7, sam, paf, pair, json (see below)")
        ->capture_default_str();
    add_output("-o,--out", s_.out, "-o", "Output file, written atomically [default: stdout]");
}

// How the search runs: threads, backend, memory, GPUs, long pairs.
void align_command::add_run_options(CLI::App* sub) {
    add_threads(s_.threads, "CPU threads (at most 4096); 0 = one per hardware thread");
    sub->add_option("--backend", s_.backend,
                    "auto: the GPU when one is usable, else the CPU (with a notice); gpu without a usable GPU is "
                    "an error (exit 3)")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    sub->add_option("--db-chunk", s_.db_chunk, "Read the database in chunks of about this many residues (bounds "
                                               "memory; same output)")
        ->capture_default_str();
    sub->add_option("--gpu-mem", s_.gpu_mem,
                    "Device memory the GPU backend may use, in bytes or with K, M, G (e.g. 4G) [default: what is "
                    "free]; a database that does not fit is searched in slices with the same output");
    sub->add_option("--gpus", s_.gpus,
                    "Number of GPUs the score pass of database search spreads over: the first N of those visible "
                    "(CUDA_VISIBLE_DEVICES chooses them); 0 = all. The database is cut by residues; same output")
        ->capture_default_str();
    sub->add_option("--gpu-align", s_.gpu_align,
                    "With the GPU backend, where the printed alignments are computed: gpu (auto) aligns them on the "
                    "GPU after the search, the largest pairs on CPU threads beside it; cpu aligns them on CPU threads "
                    "while the GPU searches for the last queries. Same output either way")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    sub->add_option("--mode", s_.mode,
                    "How pairs are scored: search runs every pair through the database-search pass; pairwise aligns "
                    "each (query, subject) pair with the whole GPU (or every CPU thread) in linear memory, for long "
                    "sequences; auto takes pairwise for pairs of at least 2^27 cells (2^24 on the CPU) whose shorter "
                    "sequence has at least 4096 residues. Same output either way")
        ->check(CLI::IsMember({"auto", "search", "pairwise"}))
        ->capture_default_str();
    sub->add_option("--long-policy", s_.long_policy,
                    "Forward passes of long pairs on the GPU: antidiagonal (bands of rows in a warp's registers, "
                    "cells along anti-diagonals in each tile), compensation (a warp's lanes on one column, the "
                    "vertical gap by a (max,+) weighted scan across them), auto: the faster by the measurements in "
                    "data/long_pair_policy.tsv. Same output either way")
        ->check(CLI::IsMember({"auto", "antidiagonal", "compensation"}))
        ->capture_default_str();
}

// BLAST's masking and composition-based statistics.
void align_command::add_masking_options(CLI::App* sub) {
    sub->add_option("--seg", s_.seg,
                    "Protein queries: mask low-complexity regions found by SEG (window 12, locut 2.2, hicut 2.5) as "
                    "X for the search and the alignments, as blastp -seg yes does; output shows the query's letters")
        ->check(CLI::IsMember({"yes", "no"}))
        ->capture_default_str();
    sub->add_option("--dust", s_.dust,
                    "DNA queries: mask low-complexity regions found by symmetric DUST (level 20, window 64, linker 1) "
                    "as N for the search and the alignments, as blastn -dust yes -soft_masking false does")
        ->check(CLI::IsMember({"yes", "no"}))
        ->capture_default_str();
    sub->add_option("--max-hsps", s_.max_hsps,
                    "Alignments per (query, subject, strand), as BLAST's -max_hsps: the best, then the best sharing "
                    "no aligned pair of residues with those before it (Waterman-Eggert), while E <= -e; with "
                    "--comp-based-stats 1 under the pair's adjusted matrix (docs/align.md)")
        ->capture_default_str();
    zdrop_ = sub->add_option("--zdrop", s_.zdrop,
                             "DNA: cut each alignment where its running score falls more than Z below its best and "
                             "no gap in one sequence explains the drop (minimap2's Z-drop); its collinear blocks are "
                             "printed, the best --max-hsps of each pair (docs/align.md) [default: not cut]");
    sub->add_option("--comp-based-stats", s_.comp_based_stats,
                    "Protein, BLOSUM45/50/62/80/90 or PAM30/70/250: 0 = standard statistics (blastp -comp_based_stats 0); "
                    "1 = composition-based "
                    "statistics (Schaffer et al. 2001): each hit realigned with the matrix rescaled to the pair's "
                    "amino-acid compositions, its score and E-value from that alignment, as blastp "
                    "-comp_based_stats 1 (docs/align.md)")
        ->check(CLI::IsMember({0, 1}))
        ->capture_default_str();
}

// SAM read groups, CIGAR style, dot plot, bad records, messages.
void align_command::add_report_options(CLI::App* sub) {
    sub->add_option("--read-group", s_.read_group,
                    "SAM: an @RG header line's fields as bwa mem -R takes them, e.g. 'ID:run1\\tSM:sample1' (\\t or "
                    "tabs between fields); every record gets RG:Z: with its ID");
    sub->add_flag("--eqx", s_.eqx, "CIGARs (cigar column, SAM, PAF cg:Z) with = for identities and X for mismatches");
    add_output("--dotplot", s_.dotplot, "--dotplot", "Also write an SVG dot plot of the printed alignments to this file (named .svg)");
    sub->add_flag("--skip-bad", s_.skip_bad, "Skip bad sequence records with a warning instead of failing");
    auto* verbose = sub->add_flag("-v,--verbose", s_.verbose, "Report what is done on stderr");
    auto* quiet = sub->add_flag("-q,--quiet", s_.quiet, "Only errors on stderr");
    verbose->excludes(quiet);
}

// With --batch, -o names the folder of the outputs (created when missing), not a file.
void align_command::run_files(std::vector<io::named_file>& outputs, std::vector<io::named_file>&) {
    if (!s_.batch.empty()) std::erase_if(outputs, [](const io::named_file& f) { return f.role == "-o"; });
}

int align_command::run(const std::string& command_line) {
    const given_options given{gap_open_->count() > 0, gap_extend_->count() > 0, match_->count() > 0,
                              mismatch_->count() > 0, strand_->count() > 0, max_target_seqs_->count() > 0,
                              evalue_->count() > 0, zdrop_->count() > 0};
    if (!s_.server.empty()) return align_on_server(s_, given);
    align_run run(s_, given, command_line);
    io::process_group& group = io::process_group::world();
    if (group.size() == 1) return run.run();
    // Under MPI an error of one rank ends every rank (the others would wait for it forever): the error's line, then
    // MPI_Abort with its exit code.
    try {
        return run.run();
    } catch (const error& e) {
        group.abort(static_cast<int>(e.code()), e.what());
    } catch (const std::bad_alloc&) {
        group.abort(static_cast<int>(exit_code::out_of_memory), "out of memory");
    } catch (const std::exception& e) {
        group.abort(static_cast<int>(exit_code::runtime_failure), e.what());
    }
}

}  // namespace swgpu::app
