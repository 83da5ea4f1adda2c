// The book comes in two editions, English at the site's root and zh-CN in
// zh-CN/ beneath it (book/po/README.md). mdBook has no language menu, so
// every page gets a link in the menu bar to the same page in the other
// edition. `path_to_root` is mdBook's: this page's way back to its
// edition's root.
(function () {
    const buttons = document.querySelector('#mdbook-menu-bar .right-buttons, .menu-bar .right-buttons');
    if (!buttons || typeof path_to_root === 'undefined') {
        return;
    }
    const here = window.location.href;
    const root = new URL(path_to_root || './', here).href;
    const page = here.startsWith(root) ? here.slice(root.length) : '';
    const chinese = document.documentElement.lang === 'zh-CN';
    const link = document.createElement('a');
    link.href = root + (chinese ? '../' : 'zh-CN/') + page;
    link.textContent = chinese ? 'English' : '简体中文';
    link.lang = chinese ? 'en' : 'zh-CN';
    link.title = chinese ? 'Read this page in English' : '阅读本页的简体中文版';
    link.className = 'edition-link';
    link.style.cssText = 'font-size: 1.4rem; padding: 0 10px; line-height: var(--menu-bar-height); text-decoration: none;';
    buttons.prepend(link);
})();
