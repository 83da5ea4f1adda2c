// Search that finds Chinese words. mdBook's index splits text into words
// at spaces, which Chinese does not write: a whole sentence is one "word",
// and a search for 协程 finds only sentences that begin with it. The index
// keeps every section's text (its document store, for the teasers), so a
// query with Chinese characters in it is answered here instead, by finding
// each of its space-separated terms anywhere in a section's text: title
// matches count twice, as in mdBook's own ranking. Other queries go to
// elasticlunr as before.
(function () {
    if (typeof elasticlunr === 'undefined') {
        return;
    }
    const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;
    const original = elasticlunr.Index.prototype.search;
    function occurrences(text, term) {
        if (!text) {
            return 0;
        }
        let n = 0;
        for (let at = text.indexOf(term); at !== -1; at = text.indexOf(term, at + term.length)) {
            n += 1;
        }
        return n;
    }
    elasticlunr.Index.prototype.search = function (query, config) {
        if (!HAN.test(query)) {
            return original.call(this, query, config);
        }
        const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
        const docs = this.documentStore.docs;
        const results = [];
        for (const ref of Object.keys(docs)) {
            const doc = docs[ref];
            let score = 0;
            for (const term of terms) {
                score += 2 * occurrences((doc.title || '').toLowerCase(), term)
                    + occurrences((doc.breadcrumbs || '').toLowerCase(), term)
                    + occurrences((doc.body || '').toLowerCase(), term);
            }
            if (score > 0) {
                results.push({ ref: ref, score: score, doc: doc });
            }
        }
        return results.sort(function (a, b) { return b.score - a.score; });
    };
})();
