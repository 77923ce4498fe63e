-- nki-studio language server for Neovim 0.7 and later. Put this file on your runtimepath (e.g. as
-- ~/.config/nvim/plugin/nki-studio.lua) or `dofile()` it from init.lua. Tested headless in CI with Debian 12's
-- Neovim 0.7.2 (vim.lsp.start_client) and a Neovim >= 0.11 (vim.lsp.config / vim.lsp.enable).
local cmd = { "nki-studio", "serve" }
local init_options = { ["nki-studio"] = { nkiVersion = "0.7", target = "trn2" } }

if vim.lsp.config ~= nil and vim.lsp.enable ~= nil then
  -- Neovim 0.11+: declare the server once; Neovim starts and attaches it for Python buffers.
  vim.lsp.config("nki_studio", {
    cmd = cmd,
    filetypes = { "python" },
    root_markers = { "pyproject.toml", ".git" },
    init_options = init_options,
  })
  vim.lsp.enable("nki_studio")
else
  -- Neovim 0.7-0.10: one client per project root, started on the first Python buffer and attached to each.
  local clients = {}
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "python",
    callback = function(args)
      local marker = vim.fn.findfile("pyproject.toml", vim.fn.fnamemodify(args.file, ":p:h") .. ";")
      local root = marker ~= "" and vim.fn.fnamemodify(marker, ":p:h") or vim.fn.getcwd()
      local id = clients[root]
      if id == nil or vim.lsp.get_client_by_id(id) == nil then
        id = vim.lsp.start_client({ name = "nki_studio", cmd = cmd, root_dir = root, init_options = init_options })
        clients[root] = id
      end
      if id ~= nil then
        vim.lsp.buf_attach_client(args.buf, id)
      end
    end,
  })
end
