// Ferry's dashboard: small enhancements over server-rendered pages, which work without it.
// - A page whose <main> has data-refresh="<ms>" reloads its own content that often while the tab is
//   visible and nobody is choosing something in it: the server renders the same view (one path for
//   the first load and for each update), and answers every tab from one shared reading of the store.
// - A form with data-confirm asks first.
// - A checkbox with data-select-all ticks every job checkbox of its form.
;(function () {
  'use strict'
  const main = document.querySelector('main[data-refresh]')

  function busy() {
    const active = document.activeElement
    if (active && main.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName)) return true
    return main.querySelector('input[type=checkbox][name=ids]:checked') !== null
  }

  async function refresh() {
    if (document.visibilityState !== 'visible' || busy()) return
    try {
      const response = await fetch(location.href, {
        headers: { 'X-Ferry-Fragment': '1' },
        credentials: 'same-origin',
      })
      if (response.redirected || !response.ok) return
      const html = await response.text()
      if (busy()) return
      main.innerHTML = html
      main.dataset.updatedAt = String(Date.now())
      const next = main.querySelector('[data-refresh-next]')
      if (next) schedule(Number(next.getAttribute('data-refresh-next')))
      else schedule(Number(main.dataset.refresh))
      return
    } catch {
      // The server is restarting or the network is gone: try again at the next tick.
    }
    schedule(Number(main.dataset.refresh))
  }

  let timer = null
  function schedule(ms) {
    clearTimeout(timer)
    if (ms > 0) timer = setTimeout(refresh, ms)
  }
  if (main) {
    schedule(Number(main.dataset.refresh))
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') refresh()
    })
  }

  document.addEventListener('submit', (event) => {
    const form = event.target
    const question = form.getAttribute('data-confirm')
    if (question && !window.confirm(question)) event.preventDefault()
  })

  document.addEventListener('change', (event) => {
    const box = event.target
    if (!box.matches('input[data-select-all]')) return
    for (const other of box.form.querySelectorAll('input[type=checkbox][name=ids]'))
      other.checked = box.checked
  })
})()
