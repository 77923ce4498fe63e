-- Drives Neovim headless for tests/editors: wait for NKI201 from nki-studio, apply its quick fix, hover.
-- Usage: NKI_TEST_OUT=out.json nvim --headless -u editors/nvim/nki-studio.lua FILE -c "luafile tests/editors/driver.lua"
local result = { diagnostic = false, fixed = false, hover = "", error = "" }

local function finish()
  local f = assert(io.open(os.getenv("NKI_TEST_OUT"), "w"))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qa!")
end

local function nki201()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == "NKI201" then
      return d
    end
  end
  return nil
end

local ok, err = pcall(function()
  vim.wait(60000, function() return nki201() ~= nil end, 100)
  local d = nki201()
  if d == nil then
    return
  end
  result.diagnostic = true
  local lsp = d.user_data and d.user_data.lsp or {}
  local diagnostic = {
    range = lsp.range or {
      start = { line = d.lnum, character = d.col },
      ["end"] = { line = d.end_lnum, character = d.end_col },
    },
    code = d.code, source = d.source, message = d.message, severity = lsp.severity or d.severity, data = lsp.data,
  }
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(),
    range = diagnostic.range,
    context = { diagnostics = { diagnostic }, only = { "quickfix" } },
  }
  local responses = vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, 20000) or {}
  for _, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do
      if action.edit ~= nil and action.title:find("NKI201", 1, true) then
        vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
        local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
        result.fixed = text:find("nl.affine_range(", 1, true) == nil and text:find("in range(", 1, true) ~= nil
      end
    end
  end
  local row
  for i, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    local col = line:find("nisa.dma_copy", 1, true)
    if col ~= nil and row == nil then
      row = { i - 1, col + 6 }
    end
  end
  local hover_params = {
    textDocument = vim.lsp.util.make_text_document_params(),
    position = { line = row[1], character = row[2] },
  }
  for _, response in pairs(vim.lsp.buf_request_sync(0, "textDocument/hover", hover_params, 20000) or {}) do
    local contents = response.result and response.result.contents
    if type(contents) == "table" and contents.value ~= nil then
      result.hover = contents.value
    end
  end
end)
if not ok then
  result.error = tostring(err)
end
finish()
