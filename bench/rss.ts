/**
 * Preloaded (node --import) into every benchmarked process: reports the
 * process's peak resident set size on stderr when it exits, so the tap, the
 * naive pipeline and the download floor are measured the same way.
 */
process.on('exit', () => {
  process.stderr.write(`\nBENCH_MAX_RSS_KB ${process.resourceUsage().maxRSS}\n`);
});
