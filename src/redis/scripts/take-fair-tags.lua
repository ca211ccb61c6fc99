--[[
  Fair tagging (src/queues/fair-share.ts): the tags of an organisation's next jobs (includes/fair-tags.lua).

  KEYS[1] the queue's count (epoch)
  KEYS[2] the queue's virtual time
  KEYS[3] the organisation's last tag, as `<epoch>:<tag>`
  ARGV[1] how many jobs
  ARGV[2] the organisation's tag lifetime (s)

  Returns the first tag of the batch (the batch takes it and the next count - 1).
]]
--- @include fair-tags
return first
