console.log(Math.floor(2.5))
